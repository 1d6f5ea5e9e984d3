/* Example of the C API, built with pkg-config:
 *   cc main.c $(pkg-config --cflags --libs gpukern) -o c_api_example
 * Runs a 3x4 * 4x2 gemm and a softmax on the backend of GPUKERN_BACKEND (default auto)
 * through buffers from gk_malloc, and checks both against known values. */
#include <gpukern/gpukern.h>

#include <math.h>
#include <stdio.h>

static int check(gk_status status, const char* what) {
  if (status != GK_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", what, gk_status_name(status), gk_last_error());
    return 1;
  }
  return 0;
}

int main(void) {
  const float a[3 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const float b[4 * 2] = {1, 0, 0, 1, 1, 0, 0, 1};
  const float expected_c[3 * 2] = {4, 6, 12, 14, 20, 22};
  float c[3 * 2] = {0};
  float y[3 * 2] = {0};
  gk_handle handle = NULL;
  void *da = NULL, *db = NULL, *dc = NULL;
  gk_gemm_desc gemm = {0};
  gk_softmax_desc softmax = {0};
  gk_device_info info;
  int failures = 0, i;

  if (check(gk_open(NULL, &handle), "gk_open")) return 2;
  if (check(gk_get_device_info(handle, &info), "gk_get_device_info")) return 2;
  printf("libgpukern %s on %s (%s)\n", gk_version(), info.backend, info.name);

  if (check(gk_malloc(handle, sizeof a, &da), "gk_malloc") || check(gk_malloc(handle, sizeof b, &db), "gk_malloc") ||
      check(gk_malloc(handle, sizeof c, &dc), "gk_malloc") ||
      check(gk_memcpy(handle, da, a, sizeof a, GK_HOST_TO_DEVICE), "gk_memcpy") ||
      check(gk_memcpy(handle, db, b, sizeof b, GK_HOST_TO_DEVICE), "gk_memcpy"))
    return 2;

  gemm.trans_a = GK_NO_TRANS;
  gemm.trans_b = GK_NO_TRANS;
  gemm.m = 3;
  gemm.n = 2;
  gemm.k = 4;
  gemm.alpha = 1.0f;
  gemm.a = da;
  gemm.lda = 4;
  gemm.b = db;
  gemm.ldb = 2;
  gemm.beta = 0.0f;
  gemm.c = dc;
  gemm.ldc = 2;
  gemm.ab_type = GK_F32;
  gemm.c_type = GK_F32;
  if (check(gk_gemm(handle, &gemm), "gk_gemm")) return 2;
  if (check(gk_synchronize(handle), "gk_synchronize") ||
      check(gk_memcpy(handle, c, dc, sizeof c, GK_DEVICE_TO_HOST), "gk_memcpy"))
    return 2;
  for (i = 0; i < 6; ++i)
    if (c[i] != expected_c[i]) {
      printf("gemm: c[%d] = %g, expected %g\n", i, c[i], expected_c[i]);
      ++failures;
    }

  /* softmax of each row of C, in place */
  softmax.rows = 3;
  softmax.cols = 2;
  softmax.x = dc;
  softmax.ldx = 2;
  softmax.y = dc;
  softmax.ldy = 2;
  softmax.dtype = GK_F32;
  if (check(gk_softmax(handle, &softmax), "gk_softmax")) return 2;
  if (check(gk_synchronize(handle), "gk_synchronize") ||
      check(gk_memcpy(handle, y, dc, sizeof y, GK_DEVICE_TO_HOST), "gk_memcpy"))
    return 2;
  for (i = 0; i < 3; ++i) {
    /* each row is (v, v + 2): softmax = (1 / (1 + e^2), e^2 / (1 + e^2)) */
    const double low = 1.0 / (1.0 + exp(2.0));
    if (fabs(y[2 * i] - low) > 1e-6 || fabs(y[2 * i + 1] - (1.0 - low)) > 1e-6) {
      printf("softmax: row %d = (%g, %g), expected (%g, %g)\n", i, y[2 * i], y[2 * i + 1], low, 1.0 - low);
      ++failures;
    }
  }

  gk_free(handle, da);
  gk_free(handle, db);
  gk_free(handle, dc);
  gk_close(handle);
  printf(failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}
