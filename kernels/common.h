// Shared by every kernel file: the label and index types, and the foreground test.
//
// Labels are a pixel (or block) index + 1 with 0 for background, so they need as many bits as
// pixel indices. Both are 32-bit today (images of up to 2^32 - 1 pixels); a build with
// -D LABEL_BITS=64 makes both 64-bit (the preludes switch ATOMIC_MIN to the 64-bit atomic),
// for images past 4 Gpx. Coordinates and sizes along one axis stay `uint`.
#ifndef LABEL_BITS
#define LABEL_BITS 32
#endif
#if LABEL_BITS == 64
typedef ulong label_t;
typedef ulong index_t;
#else
typedef uint label_t;
typedef uint index_t;
#endif

// The raster index of pixel (x, y) of an image `width` pixels wide, computed in index_t.
#define PIXEL_INDEX(x, y, width) ((index_t)(y) * (width) + (x))
// The raster index of voxel (x, y, z) of a volume `width` x `height` voxels per slice (x
// fastest, then y, then z); an image is the volume of one slice (z = 0).
#define VOXEL_INDEX(x, y, z, width, height) (((index_t)(z) * (height) + (y)) * (width) + (x))

// Foreground test: any nonzero pixel value is foreground (never `& 1`: inputs of 255 or 2 must
// work).
#define FG(v) ((v) != 0)
