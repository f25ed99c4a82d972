// The few pieces of FFmpeg that Swift cannot use directly: function-like
// macros (AVERROR, AV_NOPTS_VALUE) and the APIs that moved between FFmpeg
// releases. Each shim is named after the module. Stateless: the log callback,
// which keeps state, is the C target CFFmpegLog. libswscale and
// libswresample are CFFmpegScale, linked only by what scales or resamples.
#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/mastering_display_metadata.h>

// AVERROR codes are built from macros Swift does not import.
static inline int CFFmpeg_AVERROR_EOF(void) { return AVERROR_EOF; }
static inline int CFFmpeg_AVERROR_EXIT(void) { return AVERROR_EXIT; }
static inline int CFFmpeg_AVERROR_INVALIDDATA(void) { return AVERROR_INVALIDDATA; }
static inline int CFFmpeg_AVERROR_PATCHWELCOME(void) { return AVERROR_PATCHWELCOME; }

// AV_NOPTS_VALUE is a cast expression, not a literal, so Swift does not see it.
static inline int64_t CFFmpeg_AV_NOPTS_VALUE(void) { return AV_NOPTS_VALUE; }

static inline int CFFmpeg_AVERROR_EAGAIN(void) { return AVERROR(EAGAIN); }

// FF_QP2LAMBDA is a macro; JPEG quality is a quantiser times this.
static inline int CFFmpeg_FF_QP2LAMBDA(void) { return FF_QP2LAMBDA; }

static inline uint32_t CFFmpeg_MKTAG(char a, char b, char c, char d) {
    return MKTAG(a, b, c, d);
}

// Stream side data (the display matrix, HDR10's metadata). FFmpeg 5.x keeps it as stream side data;
// from libavcodec 60.29 (FFmpeg 6.1) it lives in codecpar->coded_side_data and
// the stream side-data API is deprecated, then removed in libavformat 61.
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
#define CFFMPEG_CODEC_PAR_SIDE_DATA 1
#else
#define CFFMPEG_CODEC_PAR_SIDE_DATA 0
#endif

// A stream's side data of one type and its size, wherever this FFmpeg keeps
// it; NULL when it has none.
static inline const uint8_t *CFFmpeg_stream_side_data(const AVStream *stream, enum AVPacketSideDataType type, size_t *size) {
#if CFFMPEG_CODEC_PAR_SIDE_DATA
    const AVPacketSideData *sd = av_packet_side_data_get(stream->codecpar->coded_side_data,
                                                         stream->codecpar->nb_coded_side_data, type);
    if (!sd) return NULL;
    *size = sd->size;
    return sd->data;
#else
    return av_stream_get_side_data(stream, type, size);
#endif
}

static inline const int32_t *CFFmpeg_stream_display_matrix(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *data = CFFmpeg_stream_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!data || size < 9 * sizeof(int32_t)) return NULL;
    return (const int32_t *)data;
}

// HDR10's static metadata of a stream (an MP4's mdcv and clli, Matroska's
// colour elements), for an encoder to write again; NULL when it has none.
static inline const AVMasteringDisplayMetadata *CFFmpeg_stream_mastering_display(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *data = CFFmpeg_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size);
    if (!data || size < sizeof(AVMasteringDisplayMetadata)) return NULL;
    return (const AVMasteringDisplayMetadata *)data;
}

static inline const AVContentLightMetadata *CFFmpeg_stream_content_light(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *data = CFFmpeg_stream_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size);
    if (!data || size < sizeof(AVContentLightMetadata)) return NULL;
    return (const AVContentLightMetadata *)data;
}

// Writes a display matrix of nine values (a, b, u, c, d, v, x, y, w) as they
// are onto an output stream: the source's, mirrors included. 0 or a negative AVERROR.
static inline int CFFmpeg_stream_set_display_matrix(AVStream *stream, const int32_t *values) {
#if CFFMPEG_CODEC_PAR_SIDE_DATA
    AVPacketSideData *sd = av_packet_side_data_new(&stream->codecpar->coded_side_data,
                                                   &stream->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t), 0);
    if (!sd) return AVERROR(ENOMEM);
    memcpy(sd->data, values, 9 * sizeof(int32_t));
#else
    uint8_t *data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (!data) return AVERROR(ENOMEM);
    memcpy(data, values, 9 * sizeof(int32_t));
#endif
    return 0;
}

// Writes a display matrix for a clockwise rotation of `clockwise_degrees`
// (0, 90, 180, 270) onto an output stream. av_display_rotation_set() takes the
// clockwise angle (an iPhone portrait clip, tkhd matrix (0,1,-1,0), is
// av_display_rotation_set(m, 90)), while av_display_rotation_get() answers
// counterclockwise (-90 for that clip). Returns 0 or a negative AVERROR.
static inline int CFFmpeg_stream_set_rotation(AVStream *stream, int clockwise_degrees) {
#if CFFMPEG_CODEC_PAR_SIDE_DATA
    AVPacketSideData *sd = av_packet_side_data_new(&stream->codecpar->coded_side_data,
                                                   &stream->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX,
                                                   9 * sizeof(int32_t), 0);
    if (!sd) return AVERROR(ENOMEM);
    int32_t *matrix = (int32_t *)sd->data;
#else
    int32_t *matrix = (int32_t *)av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX,
                                                         9 * sizeof(int32_t));
    if (!matrix) return AVERROR(ENOMEM);
#endif
    av_display_rotation_set(matrix, (double)clockwise_degrees);
    return 0;
}

// A write-only AVIO context whose bytes go to `write` (with `opaque`),
// sequentially and never seeked: a stream. FFmpeg 7.0 (libavformat 61) made
// the callback's buffer const; the callback here takes it const on every
// release. The buffer is av_malloc'd; avio_context_free does not free it.
typedef int (*CFFmpeg_write_callback)(void *opaque, const uint8_t *bytes, int count);

static inline AVIOContext *CFFmpeg_avio_writer(void *opaque, CFFmpeg_write_callback write, int buffer_size) {
    unsigned char *buffer = av_malloc(buffer_size);
    if (!buffer) return NULL;
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    AVIOContext *context = avio_alloc_context(buffer, buffer_size, 1, opaque, NULL, write, NULL);
#else
    AVIOContext *context = avio_alloc_context(buffer, buffer_size, 1, opaque, NULL,
                                              (int (*)(void *, uint8_t *, int))write, NULL);
#endif
    if (!context) { av_free(buffer); return NULL; }
    context->seekable = 0;
    return context;
}

// Frees a context made by CFFmpeg_avio_writer, its buffer too, and sets *context to NULL.
static inline void CFFmpeg_avio_writer_free(AVIOContext **context) {
    if (!*context) return;
    av_freep(&(*context)->buffer);
    avio_context_free(context);
}

#endif
