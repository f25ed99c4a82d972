// FFmpeg logs through a variadic callback that Swift cannot implement. The
// callback here formats each line FFmpeg logs at or above a chosen level,
// without its prefix, and hands it to a plain C function together with the
// object that logged it (a format context, say) and its level. Nothing is
// printed: a library is silent unless its caller asks for the messages.
#ifndef CFFMPEG_LOG_H
#define CFFMPEG_LOG_H

// `category` is the logging object's AVClassCategory (a decoder, a muxer,
// ...) and `name` its item name ("h264", "mov,mp4,m4a,3gp,3g2,mj2"), or 0
// and NULL for a line logged without an object. A demuxer's parser, which
// logs through a codec context with no codec, is a decoder named "parser".
typedef void (*CFFmpegLog_sink)(void *logger, int level, int category, const char *name, const char *line);

// Sets the sink (NULL for none) and makes FFmpeg log through it. Process-wide.
void CFFmpegLog_install_sink(CFFmpegLog_sink sink);

// Lines this thread logs at levels up to `level` (AV_LOG_WARNING,
// AV_LOG_DEBUG, ...; AV_LOG_QUIET, the default, for none) reach the sink, and
// the previous level is returned. Errors reach it from every thread.
int CFFmpegLog_set_thread_level(int level);

#endif
