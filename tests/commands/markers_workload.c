/* A workload for tests/markers.rs: marks N ranges ("range <i>"), each around ~1 ms of work
 * (2 000 markers a second: the sender's queue of ZM_PENDING markers covers a listener kept off
 * the CPU for 100 ms, as a loaded machine does; floods are tests/markers.rs's other test),
 * through include/zescope_markers.h, and writes the time it stamped on each marker to a log
 * ("B|E <i> <t_ns>" lines). Prints "sent <n> dropped <n>" at the end.
 *
 *     workload N LOG
 */
#include "zescope_markers.h"

static volatile uint64_t sink;

static void work(uint64_t ns) {
  uint64_t until = zm_now_ns() + ns, x = 1;
  while (zm_now_ns() < until)
    for (int i = 0; i < 100; i++) x = x * 6364136223846793005ull + 1;
  sink = x;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: workload N LOG\n");
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  FILE *log = fopen(argv[2], "w");
  if (!log || n <= 0) return 2;
  char name[64];
  for (long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "range %ld", i);
    uint64_t t = zm_now_ns();
    zm_send_at('B', t, name);
    fprintf(log, "B %ld %llu\n", i, (unsigned long long)t);
    work(1000000);
    t = zm_now_ns();
    zm_send_at('E', t, name);
    fprintf(log, "E %ld %llu\n", i, (unsigned long long)t);
  }
  fclose(log);
  /* The last markers may wait for room in zescope's queue: give them up to a second. */
  for (int i = 0; i < 1000 && zm_flush() > 0; i++) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  printf("sent %llu dropped %llu\n", zm_state()->sent, zm_state()->dropped);
  return zm_state()->dropped == 0 ? 0 : 1;
}
