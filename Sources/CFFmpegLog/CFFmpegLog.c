#include "CFFmpegLog.h"

#include <stdarg.h>
#include <stdatomic.h>

#include <libavutil/log.h>

// The one sink of the process, read on FFmpeg's logging threads.
static _Atomic(CFFmpegLog_error_sink) error_sink = NULL;

static void log_trampoline(void *logger, int level, const char *format, va_list arguments) {
    CFFmpegLog_error_sink sink = atomic_load(&error_sink);
    if (sink && level <= AV_LOG_ERROR) {
        char line[512];
        int print_prefix = 0;
        va_list copy;
        va_copy(copy, arguments);
        av_log_format_line2(NULL, level, format, copy, line, sizeof(line), &print_prefix);
        va_end(copy);
        sink(logger, line);
    }
    av_log_default_callback(logger, level, format, arguments);
}

void CFFmpegLog_install_error_sink(CFFmpegLog_error_sink sink) {
    atomic_store(&error_sink, sink);
    av_log_set_callback(log_trampoline);
}
