// Runs registry operations in a fresh process for the module-loading tests (each test
// needs a registry that has probed nothing yet, and a crash must not take the test
// runner down). Each argument group is one step; one line of output per step:
//   open SPEC         "open SPEC: Success cpu:0" or "open SPEC: <Status>: <message>"
//                     (SPEC "-" passes NULL: GPUKERN_BACKEND decides)
//   list              "backend NAME available=0|1 devices=N reason=..." per backend
//   set NAME VALUE    "set NAME: Success" or "set NAME: <Status>: <message>" ("-" = NULL)
#include <gpukern/gpukern.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

void print_status(const std::string& step, gk_status status) {
  if (status == GK_SUCCESS)
    std::printf("%s: Success", step.c_str());
  else
    std::printf("%s: %s: %s", step.c_str(), gk_status_name(status), gk_last_error());
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string step = argv[i];
    if (step == "open" && i + 1 < argc) {
      const char* spec = std::strcmp(argv[++i], "-") == 0 ? nullptr : argv[i];
      gk_handle handle = nullptr;
      const gk_status status = gk_open(spec, &handle);
      print_status("open " + std::string(argv[i]), status);
      if (status == GK_SUCCESS) {
        gk_device_info info{};
        gk_get_device_info(handle, &info);
        std::printf(" %s:%d", info.backend, info.index);
        gk_close(handle);
      }
      std::printf("\n");
    } else if (step == "list") {
      int count = 0;
      gk_backend_count(&count);
      for (int b = 0; b < count; ++b) {
        gk_backend_info info{};
        gk_get_backend_info(b, &info);
        std::printf("backend %s available=%d devices=%d reason=%s\n", info.name, info.available, info.device_count,
                    info.reason);
      }
    } else if (step == "set" && i + 2 < argc) {
      const char* name = argv[++i];
      const char* value = std::strcmp(argv[++i], "-") == 0 ? nullptr : argv[i];
      print_status("set " + std::string(name), gk_set_option(name, value));
      std::printf("\n");
    } else {
      std::fprintf(stderr, "unknown step '%s'\n", argv[i]);
      return 2;
    }
    std::fflush(stdout);
  }
  return 0;
}
