// libswresample (audio: sample formats, rates and channel layouts), for the
// core's audio encoding. Small: it links libavutil and libsoxr.
#ifndef CFFMPEG_RESAMPLE_H
#define CFFMPEG_RESAMPLE_H

#include <libswresample/swresample.h>

#endif
