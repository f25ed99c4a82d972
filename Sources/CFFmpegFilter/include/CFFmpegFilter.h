// libavfilter for audio and video, loaded when first used. Linking libavfilter outright
// maps it and everything Debian builds it against (rubberband, zimg,
// vid.stab, postproc...) into every process that links MediaMux: 11.5 MiB of
// resident memory, measured, for what only a soundtrack with effects needs.
// So the library is opened with dlopen on first use, and these functions
// are the whole of what MediaMux asks of it: a graph of audio filters from
// some inputs to one output, or of video filters from one, fed and drained
// frame by frame.
#ifndef CFFMPEG_FILTER_H
#define CFFMPEG_FILTER_H

#include <stddef.h>
#include <libavutil/channel_layout.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
#include <libavutil/rational.h>

typedef struct CFFmpegFilter_graph CFFmpegFilter_graph;

// Opens libavfilter once per process. 0, or a negative AVERROR code with
// `message` saying why (the library is missing, a symbol is missing).
int CFFmpegFilter_load(char *message, size_t size);

// A graph running `filters` (libavfilter's syntax) on `inputs` inputs of
// planar float audio at `rate` with `layout`, named [in0], [in1]... in
// `filters`, whose last output is left unnamed: "[in0]volume=-6dB,afade=...",
// or "[in0]anull[a];[in1]volume=-12dB[b];[a][b]amix=inputs=2". The output
// has the inputs' format, rate and layout, in frames of `frame_size`
// samples (0: as they come), timestamps in 1/`rate`. NULL on failure, with
// `error` set to an AVERROR code and `message` saying what failed.
CFFmpegFilter_graph *CFFmpegFilter_create(
    const char *filters, int inputs, int rate, const AVChannelLayout *layout, int frame_size,
    int *error, char *message, size_t size);

// A graph running `filters` on one input of video pictures (named [in0])
// of the size, pixel format, time base and pixel aspect given, whose last
// output is left unnamed: "[in0]transpose=clock,scale=1080:-2". The output
// is converted to `output_format`. `threads`: libavfilter's slice threads (0
// for as many as there are cores). NULL on failure, as CFFmpegFilter_create.
CFFmpegFilter_graph *CFFmpegFilter_create_video(
    const char *filters, int width, int height, enum AVPixelFormat format, AVRational time_base, AVRational pixel_aspect,
    enum AVPixelFormat output_format, int threads, int *error, char *message, size_t size);

// Hands input `input` a frame (NULL: its end). 0 or a negative AVERROR code.
int CFFmpegFilter_send(CFFmpegFilter_graph *graph, int input, AVFrame *frame);

// Takes a filtered frame into `frame`: 0, AVERROR(EAGAIN) when the graph
// needs more input, AVERROR_EOF after the end, or another negative code.
int CFFmpegFilter_receive(CFFmpegFilter_graph *graph, AVFrame *frame);

// Frees the graph and sets *graph to NULL.
void CFFmpegFilter_free(CFFmpegFilter_graph **graph);

#endif
