// libswscale (pictures: pixel formats and sizes) and libswresample (audio:
// sample formats, rates and channel layouts), apart from the rest of FFmpeg so
// that only the modules that convert link them.
#ifndef CFFMPEG_SCALE_H
#define CFFMPEG_SCALE_H

#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#endif
