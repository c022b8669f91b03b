/* zescope_markers.h: mark instants and ranges of a running program for zescope.
 *
 * One header, no library. Copy it into your project and:
 *
 *     #include "zescope_markers.h"
 *     zm_begin("solve");
 *     ... the work ...
 *     zm_end("solve");
 *     zm_instant("converged");
 *
 * zescope shows the markers on its plots, on the same time axis as the GPU's counters (both use
 * CLOCK_MONOTONIC), and saves them with its sessions.
 *
 * Protocol (version 1; README.md, "Markers"): one datagram per marker over a Unix datagram
 * socket, holding one line
 *
 *     zm1 <kind> <t_ns> <name>\n
 *
 * kind: I (instant), B (a range begins), E (the newest open range of that name ends);
 * t_ns: CLOCK_MONOTONIC in decimal nanoseconds; name: 1 to 200 bytes of UTF-8 without control
 * characters (longer names are cut at 200 bytes). A message is at most 256 bytes.
 *
 * The socket is $ZESCOPE_MARKERS (zescope sets it for programs it starts), else
 * $XDG_RUNTIME_DIR/zescope/markers.sock, else /tmp/zescope-<uid>/markers.sock.
 *
 * Sending never blocks: the socket is non-blocking. When zescope's queue is full (EAGAIN: the
 * kernel queues only net.unix.max_dgram_qlen datagrams, often 10) up to ZM_PENDING markers wait
 * here and go out, in order and with the time they were stamped, before the next marker or on
 * zm_flush(); past that, and when nobody listens (ENOENT, ECONNREFUSED), markers are dropped and
 * counted in zm_state()->dropped. Call zm_flush() (repeatedly, while zm_pending() says markers
 * wait) before exiting if the last markers matter. When nobody listens the sender tries to
 * connect again at most every 100 ms; in between a marker costs one clock read.
 *
 * The state is static, one per translation unit that uses the functions. They are not
 * thread-safe: from several threads, guard them with a lock (or use one translation unit per
 * thread). Compile with -std=c99 or later on
 * Linux. With a strict -std=c99/c11 include this header before any other (it defines _GNU_SOURCE
 * for clock_gettime and SOCK_NONBLOCK) or compile with -D_GNU_SOURCE.
 */
#ifndef ZESCOPE_MARKERS_H
#define ZESCOPE_MARKERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define ZM_MAX_NAME 200
#define ZM_MAX_MESSAGE 256
#define ZM_RETRY_NS 100000000ull
#define ZM_PENDING 256

/* The process's sender. */
struct zm_state {
  int opened;                  /* the socket is open (fd is valid) */
  int fd;                      /* the socket */
  int connected;               /* connected to a listener */
  uint64_t retry_at;           /* when to try connecting again (CLOCK_MONOTONIC ns) */
  unsigned long long sent;     /* markers handed to zescope */
  unsigned long long dropped;  /* markers dropped: nobody listened, or the queue was full */
  struct sockaddr_un addr;
  socklen_t addr_len;
  unsigned head, count;        /* markers waiting for room in zescope's queue (a ring) */
  unsigned short len[ZM_PENDING];
  char msg[ZM_PENDING][ZM_MAX_MESSAGE];
};

static inline struct zm_state *zm_state(void) {
  static struct zm_state s; /* zero: not opened */
  return &s;
}

/* Now, in ns of CLOCK_MONOTONIC: the time markers carry. */
static inline uint64_t zm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Finds the socket path and opens the socket; 0 on success. */
static inline int zm__open(struct zm_state *s) {
  const char *env = getenv("ZESCOPE_MARKERS");
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  int n;
  memset(&s->addr, 0, sizeof s->addr);
  s->addr.sun_family = AF_UNIX;
  if (env && *env)
    n = snprintf(s->addr.sun_path, sizeof s->addr.sun_path, "%s", env);
  else if (xdg && *xdg)
    n = snprintf(s->addr.sun_path, sizeof s->addr.sun_path, "%s/zescope/markers.sock", xdg);
  else
    n = snprintf(s->addr.sun_path, sizeof s->addr.sun_path, "/tmp/zescope-%u/markers.sock",
                 (unsigned)getuid());
  if (n <= 0 || (size_t)n >= sizeof s->addr.sun_path) return -1;
  s->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
  s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->fd < 0) return -1;
  s->opened = 1;
  return 0;
}

/* One datagram: 1 sent, 0 the queue is full, -1 nobody listens any more. */
static inline int zm__try(struct zm_state *s, const char *buf, size_t len) {
  if (send(s->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len) return 1;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  s->connected = 0; /* listener gone: connect again at the next marker */
  return -1;
}

/* Sends the markers waiting, in order, until the queue is full again; how many still wait. */
static inline unsigned zm_flush(void) {
  struct zm_state *s = zm_state();
  while (s->count && s->connected && zm__try(s, s->msg[s->head], s->len[s->head]) == 1) {
    s->head = (s->head + 1) % ZM_PENDING;
    s->count--;
    s->sent++;
  }
  return s->count;
}

/* How many markers wait for room in zescope's queue. */
static inline unsigned zm_pending(void) { return zm_state()->count; }

/* Sends one marker stamped t_ns; 1 if the socket took it or it waits its turn, 0 if dropped. */
static inline int zm_send_at(char kind, uint64_t t_ns, const char *name) {
  struct zm_state *s = zm_state();
  char buf[ZM_MAX_MESSAGE];
  size_t len, cut;
  int head, r = 0;
  if (!s->opened && zm__open(s) != 0) {
    s->dropped++;
    return 0;
  }
  if (!s->connected) {
    if (t_ns < s->retry_at) {
      s->dropped++;
      return 0;
    }
    if (connect(s->fd, (const struct sockaddr *)&s->addr, s->addr_len) != 0) {
      s->retry_at = t_ns + ZM_RETRY_NS;
      s->dropped++;
      return 0;
    }
    s->connected = 1;
  }
  cut = strlen(name);
  if (cut > ZM_MAX_NAME) {
    cut = ZM_MAX_NAME;
    while (cut > 0 && ((unsigned char)name[cut] & 0xC0) == 0x80) cut--; /* a whole UTF-8 char */
  }
  head = snprintf(buf, sizeof buf, "zm1 %c %llu ", kind, (unsigned long long)t_ns);
  if (head <= 0) return 0;
  memcpy(buf + head, name, cut);
  buf[head + cut] = '\n';
  len = (size_t)head + cut + 1;
  if (s->count == 0 || zm_flush() == 0) {
    r = zm__try(s, buf, len);
    if (r == 1) {
      s->sent++;
      return 1;
    }
  }
  if (r < 0 || !s->connected || s->count == ZM_PENDING) {
    s->dropped++;
    return 0;
  }
  /* The queue is full: wait here, behind the others. */
  {
    unsigned tail = (s->head + s->count) % ZM_PENDING;
    memcpy(s->msg[tail], buf, len);
    s->len[tail] = (unsigned short)len;
    s->count++;
  }
  return 1;
}

/* Marks an instant, now. */
static inline int zm_instant(const char *name) { return zm_send_at('I', zm_now_ns(), name); }
/* Begins the range `name`, now. */
static inline int zm_begin(const char *name) { return zm_send_at('B', zm_now_ns(), name); }
/* Ends the newest open range `name`, now. */
static inline int zm_end(const char *name) { return zm_send_at('E', zm_now_ns(), name); }

#endif /* ZESCOPE_MARKERS_H */
