// viz::draw_graph: autograd::to_dot rendered in-process by Graphviz's library (no shell, no
// command line built from user input).
#include <graphviz/gvc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include "minigrad/error.h"
#include "minigrad/viz.h"

namespace minigrad::viz {
namespace {

constexpr const char* kOp = "draw_graph";

std::string extension_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot + 1);
}

// Graphviz keeps global state (its error handler, the cgraph parser): one render at a time.
std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// Graphviz's messages, collected (instead of printed on stderr) for the error we throw.
std::string& graphviz_messages() {
  static std::string messages;
  return messages;
}
int collect_message(char* message) {
  graphviz_messages() += message;
  return 0;
}
std::string last_messages() {
  std::string m = graphviz_messages();
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m.empty() ? "" : " (Graphviz: " + m + ")";
}

}  // namespace

void render_dot(const std::string& dot, const std::string& path) {
  const std::string format = extension_of(path);
  MG_CHECK(format == "png" || format == "svg" || format == "pdf" || format == "dot", kOp, path,
           ": the file name must end in .png, .svg, .pdf or .dot, got \"", format, "\"");
  if (format == "dot") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << dot;
    MG_CHECK(out.good(), kOp, path, ": cannot write the file");
    return;
  }
  std::lock_guard<std::mutex> lock(graphviz_mutex());
  graphviz_messages().clear();
  agseterrf(collect_message);
  // One context for the process, never freed: Graphviz 2.42's pango plugin keeps a text-size
  // cache that gvFreeContext frees and a later context reads (a use-after-free under ASan).
  static GVC_t* const gvc = gvContext();
  MG_CHECK(gvc != nullptr, kOp, "Graphviz could not make a context");
  Agraph_t* graph = agmemread(dot.c_str());
  if (graph == nullptr) {
    MG_ERROR(kOp, path, ": Graphviz could not parse the DOT text", last_messages());
  }
  if (gvLayout(gvc, graph, "dot") != 0) {
    agclose(graph);
    MG_ERROR(kOp, path, ": Graphviz could not lay out the graph", last_messages());
  }
  // The file is opened here, not by Graphviz (whose gvRenderFilename reports success when it
  // cannot open the file).
  std::FILE* file = std::fopen(path.c_str(), "wb");
  int rendered = -1;
  if (file != nullptr) {
    rendered = gvRender(gvc, graph, format.c_str(), file);
    if (std::fclose(file) != 0) rendered = -1;
  }
  gvFreeLayout(gvc, graph);
  agclose(graph);
  MG_CHECK(file != nullptr, kOp, path, ": cannot open the file for writing (", std::strerror(errno),
           ")");
  MG_CHECK(rendered == 0, kOp, path, ": Graphviz could not write the ", format, " file",
           last_messages());
}

void draw_graph(const Tensor& output, const std::string& path,
                const autograd::DotOptions& options) {
  render_dot(autograd::to_dot(output, options), path);
}

}  // namespace minigrad::viz
