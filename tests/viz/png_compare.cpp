// png_compare A.png B.png [--max-fraction F] [--threshold T]: decodes both pictures with cairo
// and prints how many pixels differ by more than T (0-255, any channel; default 48) and the
// largest difference. Exit status 0 when the sizes agree and at most the fraction F of the pixels
// differ (default 0.002), 1 when they do not, 2 when a file cannot be read.
// scripts/regen_docs.py --check uses it: a picture redrawn from a run on another CPU may move a
// few anti-aliased pixels (float sums round differently), a stale picture moves many.
#include <cairo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Image {
  cairo_surface_t* surface = nullptr;
  ~Image() {
    if (surface) cairo_surface_destroy(surface);
  }
};

bool load(const char* path, Image& img) {
  img.surface = cairo_image_surface_create_from_png(path);
  if (cairo_surface_status(img.surface) != CAIRO_STATUS_SUCCESS) {
    std::fprintf(stderr, "png_compare: cannot read %s: %s\n", path,
                 cairo_status_to_string(cairo_surface_status(img.surface)));
    return false;
  }
  cairo_surface_flush(img.surface);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: png_compare A.png B.png [--max-fraction F] [--threshold T]\n");
    return 2;
  }
  double max_fraction = 0.002;
  int threshold = 48;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-fraction") {
      max_fraction = std::atof(argv[i + 1]);
    } else if (flag == "--threshold") {
      threshold = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "png_compare: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  Image a, b;
  if (!load(argv[1], a) || !load(argv[2], b)) return 2;
  const int w = cairo_image_surface_get_width(a.surface);
  const int h = cairo_image_surface_get_height(a.surface);
  const int wb = cairo_image_surface_get_width(b.surface);
  const int hb = cairo_image_surface_get_height(b.surface);
  if (w != wb || h != hb) {
    std::printf("sizes differ: %dx%d and %dx%d\n", w, h, wb, hb);
    return 1;
  }
  // Both surfaces are 32 bits per pixel (ARGB32 or RGB24) as cairo decodes PNG files.
  const int sa = cairo_image_surface_get_stride(a.surface);
  const int sb = cairo_image_surface_get_stride(b.surface);
  const unsigned char* pa = cairo_image_surface_get_data(a.surface);
  const unsigned char* pb = cairo_image_surface_get_data(b.surface);
  long differing = 0;
  int largest = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int d = 0;
      for (int c = 0; c < 4; ++c)
        d = std::max(d, std::abs(pa[y * sa + 4 * x + c] - pb[y * sb + 4 * x + c]));
      largest = std::max(largest, d);
      if (d > threshold) ++differing;
    }
  }
  const double fraction = static_cast<double>(differing) / (static_cast<double>(w) * h);
  std::printf("%dx%d: %ld pixels (%.4f%%) differ by more than %d, largest difference %d\n", w, h,
              differing, 100.0 * fraction, threshold, largest);
  return fraction <= max_fraction ? 0 : 1;
}
