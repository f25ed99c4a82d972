#include "CFFmpegLog.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include <libavutil/log.h>

// The one sink of the process, read on FFmpeg's logging threads, and the
// most verbose level the call working on this thread wants (none: errors
// only). A line no one asked for is dropped here, before it is formatted:
// one verbose call costs nothing to the calls beside it.
static _Atomic(CFFmpegLog_sink) sink = NULL;
static _Thread_local int thread_level = AV_LOG_QUIET;

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static void log_trampoline(void *logger, int level, const char *format, va_list arguments) {
    CFFmpegLog_sink current = atomic_load(&sink);
    if (!current || (level > AV_LOG_ERROR && level > thread_level)) {
        return;
    }
    char line[1024];
    int print_prefix = 0;
    va_list copy;
    va_copy(copy, arguments);
    av_log_format_line2(NULL, level, format, copy, line, sizeof(line), &print_prefix);
    va_end(copy);
    // Without the whitespace around it (FFmpeg ends lines with a newline,
    // and continues some on the next call); an empty line is no line.
    size_t end = strlen(line);
    while (end > 0 && is_space(line[end - 1])) {
        end -= 1;
    }
    line[end] = 0;
    const char *text = line;
    while (is_space(*text)) {
        text += 1;
    }
    if (*text == 0) {
        return;
    }
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
    current(logger, level, category, name, text);
}

void CFFmpegLog_install_sink(CFFmpegLog_sink new_sink) {
    atomic_store(&sink, new_sink);
    av_log_set_callback(log_trampoline);
}

int CFFmpegLog_set_thread_level(int level) {
    int previous = thread_level;
    thread_level = level;
    return previous;
}
