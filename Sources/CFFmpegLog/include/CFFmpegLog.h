// FFmpeg logs through a variadic callback that Swift cannot implement. The
// callback here formats each line FFmpeg logs at or above a chosen level,
// without its prefix, and hands it to a plain C function together with the
// object that logged it (a format context, say) and its level. Nothing is
// printed: a library is silent unless its caller asks for the messages.
#ifndef CFFMPEG_LOG_H
#define CFFMPEG_LOG_H

typedef void (*CFFmpegLog_sink)(void *logger, int level, const char *line);

// Sets the sink (NULL for none) and makes FFmpeg log through it. Process-wide.
void CFFmpegLog_install_sink(CFFmpegLog_sink sink);

// Lines logged at levels up to `level` (AV_LOG_ERROR, AV_LOG_WARNING, ...)
// reach the sink; the level only ever rises. Errors always do.
void CFFmpegLog_raise_level(int level);

#endif
