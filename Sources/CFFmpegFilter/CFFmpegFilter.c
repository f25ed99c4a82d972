#include "CFFmpegFilter.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#ifdef __APPLE__
#define LIBRARY_NAME "libavfilter." STRINGIFY(LIBAVFILTER_VERSION_MAJOR) ".dylib"
#else
#define LIBRARY_NAME "libavfilter.so." STRINGIFY(LIBAVFILTER_VERSION_MAJOR)
#endif

// The functions used, typed from libavfilter's own declarations.
static struct {
    __typeof__(avfilter_get_by_name) *get_by_name;
    __typeof__(avfilter_graph_alloc) *graph_alloc;
    __typeof__(avfilter_graph_create_filter) *graph_create_filter;
    __typeof__(avfilter_graph_parse_ptr) *graph_parse_ptr;
    __typeof__(avfilter_graph_config) *graph_config;
    __typeof__(avfilter_graph_free) *graph_free;
    __typeof__(avfilter_inout_alloc) *inout_alloc;
    __typeof__(avfilter_inout_free) *inout_free;
    __typeof__(av_buffersrc_add_frame_flags) *add_frame;
    __typeof__(av_buffersink_get_frame) *get_frame;
    __typeof__(av_buffersink_set_frame_size) *set_frame_size;
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_failure[256];

static void load(void) {
    void *library = dlopen(LIBRARY_NAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(load_failure, sizeof load_failure, "%s", why ? why : LIBRARY_NAME " cannot be opened");
        return;
    }
#define RESOLVE(field, symbol)                                                          \
    api.field = (__typeof__(api.field))dlsym(library, #symbol);                         \
    if (!api.field) {                                                                    \
        snprintf(load_failure, sizeof load_failure, LIBRARY_NAME " has no " #symbol);  \
        return;                                                                          \
    }
    RESOLVE(get_by_name, avfilter_get_by_name)
    RESOLVE(graph_alloc, avfilter_graph_alloc)
    RESOLVE(graph_create_filter, avfilter_graph_create_filter)
    RESOLVE(graph_parse_ptr, avfilter_graph_parse_ptr)
    RESOLVE(graph_config, avfilter_graph_config)
    RESOLVE(graph_free, avfilter_graph_free)
    RESOLVE(inout_alloc, avfilter_inout_alloc)
    RESOLVE(inout_free, avfilter_inout_free)
    RESOLVE(add_frame, av_buffersrc_add_frame_flags)
    RESOLVE(get_frame, av_buffersink_get_frame)
    RESOLVE(set_frame_size, av_buffersink_set_frame_size)
#undef RESOLVE
    // The library stays open for the life of the process.
}

int CFFmpegFilter_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (load_failure[0]) {
        if (message && size) snprintf(message, size, "%s", load_failure);
        return AVERROR(ENOSYS);
    }
    return 0;
}

enum { MAX_INPUTS = 8 };

struct CFFmpegFilter_graph {
    AVFilterGraph *graph;
    AVFilterContext *sources[MAX_INPUTS];
    int inputs;
    AVFilterContext *sink;
};

void CFFmpegFilter_free(CFFmpegFilter_graph **graph) {
    if (!graph || !*graph) return;
    if ((*graph)->graph) api.graph_free(&(*graph)->graph);
    av_freep(graph);
}

static CFFmpegFilter_graph *fail(CFFmpegFilter_graph *made, int code, const char *what, int *error, char *message, size_t size) {
    CFFmpegFilter_free(&made);
    if (error) *error = code;
    if (message && size) {
        char reason[AV_ERROR_MAX_STRING_SIZE] = {0};
        av_strerror(code, reason, sizeof reason);
        snprintf(message, size, "%s (%s)", what, reason);
    }
    return NULL;
}

// A graph of `filters` from `inputs` sources of one kind ("abuffer" or
// "buffer", all given `source_arguments`) to one sink, with `tail` appended
// to the description after the filters (the conversion back to the format
// wanted) before the sink's [out].
static CFFmpegFilter_graph *build(
    const char *filters, int inputs, const char *source, const char *source_arguments, const char *sink, const char *tail,
    int threads, int *error, char *message, size_t size) {
    int code = CFFmpegFilter_load(message, size);
    if (code < 0) {
        if (error) *error = code;
        return NULL;
    }
    if (inputs < 1 || inputs > MAX_INPUTS) return fail(NULL, AVERROR(EINVAL), "counting the filter inputs", error, message, size);
    CFFmpegFilter_graph *made = av_mallocz(sizeof *made);
    if (!made) return fail(NULL, AVERROR(ENOMEM), "allocating a filter graph", error, message, size);
    made->graph = api.graph_alloc();
    if (!made->graph) return fail(made, AVERROR(ENOMEM), "allocating a filter graph", error, message, size);
    made->graph->nb_threads = threads;

    made->inputs = inputs;
    for (int index = 0; index < inputs; index++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", index);
        code = api.graph_create_filter(&made->sources[index], api.get_by_name(source), name, source_arguments, NULL, made->graph);
        if (code < 0) return fail(made, code, "setting up the filter input", error, message, size);
    }
    code = api.graph_create_filter(&made->sink, api.get_by_name(sink), "out", NULL, NULL, made->graph);
    if (code < 0) return fail(made, code, "setting up the filter output", error, message, size);

    size_t length = strlen(filters) + strlen(tail) + 16;
    char *description = av_malloc(length);
    if (!description) return fail(made, AVERROR(ENOMEM), "allocating a filter graph", error, message, size);
    snprintf(description, length, "%s,%s[out]", filters, tail);

    // The sources' outputs, open for the description's [inN]; the sink's input, for its [out].
    AVFilterInOut *outputs = NULL;
    for (int index = inputs - 1; index >= 0; index--) {
        AVFilterInOut *open = api.inout_alloc();
        if (!open) break;
        char name[16];
        snprintf(name, sizeof name, "in%d", index);
        open->name = av_strdup(name);
        open->filter_ctx = made->sources[index];
        open->next = outputs;
        outputs = open;
    }
    AVFilterInOut *sink_input = api.inout_alloc();
    if (!outputs || !sink_input) {
        api.inout_free(&outputs);
        api.inout_free(&sink_input);
        av_free(description);
        return fail(made, AVERROR(ENOMEM), "allocating a filter graph", error, message, size);
    }
    sink_input->name = av_strdup("out");
    sink_input->filter_ctx = made->sink;
    code = api.graph_parse_ptr(made->graph, description, &sink_input, &outputs, NULL);
    api.inout_free(&outputs);
    api.inout_free(&sink_input);
    av_free(description);
    if (code < 0) return fail(made, code, "reading the filter description", error, message, size);
    code = api.graph_config(made->graph, NULL);
    if (code < 0) return fail(made, code, "configuring the filters", error, message, size);
    return made;
}

CFFmpegFilter_graph *CFFmpegFilter_create(
    const char *filters, int inputs, int rate, const AVChannelLayout *layout, int frame_size,
    int *error, char *message, size_t size) {
    char layout_name[128] = {0};
    if (av_channel_layout_describe(layout, layout_name, sizeof layout_name) < 0) {
        return fail(NULL, AVERROR(EINVAL), "naming the channel layout", error, message, size);
    }
    char source_arguments[256];
    snprintf(source_arguments, sizeof source_arguments, "time_base=1/%d:sample_rate=%d:sample_fmt=fltp:channel_layout=%s",
             rate, rate, layout_name);
    // The filters, then back to the input's format, rate and layout.
    char tail[256];
    snprintf(tail, sizeof tail, "aformat=sample_fmts=fltp:sample_rates=%d:channel_layouts=%s", rate, layout_name);
    // One thread: the graphs are small, and the merge's other work runs beside them.
    CFFmpegFilter_graph *made = build(filters, inputs, "abuffer", source_arguments, "abuffersink", tail, 1, error, message, size);
    if (made && frame_size > 0) api.set_frame_size(made->sink, (unsigned)frame_size);
    return made;
}

CFFmpegFilter_graph *CFFmpegFilter_create_video(
    const char *filters, int width, int height, enum AVPixelFormat format, AVRational time_base, AVRational pixel_aspect,
    enum AVPixelFormat output_format, int threads, int *error, char *message, size_t size) {
    const char *format_name = av_get_pix_fmt_name(format);
    const char *output_name = av_get_pix_fmt_name(output_format);
    if (!format_name || !output_name) return fail(NULL, AVERROR(EINVAL), "naming the pixel format", error, message, size);
    if (pixel_aspect.num <= 0 || pixel_aspect.den <= 0) pixel_aspect = (AVRational){1, 1};
    char source_arguments[256];
    snprintf(source_arguments, sizeof source_arguments, "video_size=%dx%d:pix_fmt=%s:time_base=%d/%d:pixel_aspect=%d/%d",
             width, height, format_name, time_base.num, time_base.den, pixel_aspect.num, pixel_aspect.den);
    char tail[128];
    snprintf(tail, sizeof tail, "format=pix_fmts=%s", output_name);
    return build(filters, 1, "buffer", source_arguments, "buffersink", tail, threads, error, message, size);
}

int CFFmpegFilter_send(CFFmpegFilter_graph *graph, int input, AVFrame *frame) {
    if (input < 0 || input >= graph->inputs) return AVERROR(EINVAL);
    return api.add_frame(graph->sources[input], frame, AV_BUFFERSRC_FLAG_KEEP_REF);
}

int CFFmpegFilter_receive(CFFmpegFilter_graph *graph, AVFrame *frame) {
    return api.get_frame(graph->sink, frame);
}
