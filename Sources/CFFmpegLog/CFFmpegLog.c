#include "CFFmpegLog.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include <libavutil/log.h>

// The one sink of the process and the most verbose level it wants, read on
// FFmpeg's logging threads.
static _Atomic(CFFmpegLog_sink) sink = NULL;
static atomic_int wanted_level = AV_LOG_ERROR;

static void log_trampoline(void *logger, int level, const char *format, va_list arguments) {
    CFFmpegLog_sink current = atomic_load(&sink);
    if (!current || level > atomic_load(&wanted_level)) {
        return;
    }
    char line[1024];
    int print_prefix = 0;
    va_list copy;
    va_copy(copy, arguments);
    av_log_format_line2(NULL, level, format, copy, line, sizeof(line), &print_prefix);
    va_end(copy);
    const AVClass *class = logger ? *(const AVClass **)logger : NULL;
    int category = 0;
    const char *name = NULL;
    if (class) {
        category = class->get_category ? (int)class->get_category(logger) : (int)class->category;
        name = class->item_name ? class->item_name(logger) : class->class_name;
        // A codec context with no codec is a demuxer's, which its parser
        // logs through while it splits the input's packets (libavformat
        // closes the codec it probed with): the input side, as a decoder is.
        if (name && strcmp(class->class_name, "AVCodecContext") == 0 && strcmp(name, "NULL") == 0) {
            category = AV_CLASS_CATEGORY_DECODER;
            name = "parser";
        }
    }
    current(logger, level, category, name, line);
}

void CFFmpegLog_install_sink(CFFmpegLog_sink new_sink) {
    atomic_store(&sink, new_sink);
    av_log_set_callback(log_trampoline);
}

void CFFmpegLog_raise_level(int level) {
    int seen = atomic_load(&wanted_level);
    while (level > seen && !atomic_compare_exchange_weak(&wanted_level, &seen, level)) {
    }
}
