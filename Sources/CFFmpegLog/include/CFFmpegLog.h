// FFmpeg logs through a variadic callback that Swift cannot implement. The
// callback here hands each error line, without its prefix, to a plain C
// function together with the object that logged it (a format context, say),
// then leaves printing to FFmpeg's default callback and its log level.
#ifndef CFFMPEG_LOG_H
#define CFFMPEG_LOG_H

typedef void (*CFFmpegLog_error_sink)(void *logger, const char *line);

// Sets the sink (NULL for none) and makes FFmpeg log through it. Process-wide.
void CFFmpegLog_install_error_sink(CFFmpegLog_error_sink sink);

#endif
