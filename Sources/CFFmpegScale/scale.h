// libswscale (pictures: pixel formats and sizes), apart from the rest of
// FFmpeg so that only the module that converts pictures (previews) links it.
#ifndef CFFMPEG_SCALE_H
#define CFFMPEG_SCALE_H

#include <libswscale/swscale.h>

#endif
