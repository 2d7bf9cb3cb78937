/*
 * Lab stand-in for the kubelet (tests only; see tests/lab/README.md).
 *
 * Installed in a lab node as the kubelet binary (e.g. /usr/local/bin/kubelet) so that
 * /proc/PID/comm is "kubelet" and /proc/PID/cmdline is exactly the command line systemd
 * would build (argv[0] is the binary, then the flags). It is compiled by lab.sh, because a
 * shell script would show the interpreter as argv[0].
 *
 * At start it runs the config validator (kubelet-check, a shell script, with the same
 * argv) and exits with its status if the configuration is invalid, like a kubelet that
 * fails to start. Otherwise it serves GET /healthz -> 200 "ok" on 127.0.0.1:10248, which
 * exists only inside the node's network namespace, until it is killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KUBELET_CHECK
#define KUBELET_CHECK "/usr/local/lib/dnsfix-lab/kubelet-check"
#endif
#define HEALTHZ_PORT 10248
#ifndef LAB_KUBELET_VERSION
#define LAB_KUBELET_VERSION "v1.30.2"
#endif

static void logf_(char level, const char *msg, const char *detail) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    /* klog header: Lmmdd hh:mm:ss.uuuuuu pid file:line] msg */
    fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %7d lab-kubelet.c:1] \"%s\"%s%s\n", level,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
            (int)getpid(), msg, detail ? " " : "", detail ? detail : "");
    fflush(stderr);
}

static void respond(int c) {
    char buf[4096];
    size_t n = 0;
    struct timeval tv = {.tv_sec = 2, .tv_usec = 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (n < sizeof buf - 1) {
        ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = 0;
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n")) break;
    }
    buf[n] = 0;
    char method[16] = "", path[1024] = "";
    if (sscanf(buf, "%15s %1023s", method, path) != 2) return;
    char *q = strchr(path, '?');
    if (q) *q = 0;
    const char *status, *body;
    if (strcmp(path, "/healthz") == 0 && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        status = "200 OK";
        body = "ok";
    } else {
        status = "404 Not Found";
        body = "404 page not found\n";
    }
    char out[512];
    int len = snprintf(out, sizeof out,
                       "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                       "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n"
                       "Connection: close\r\n\r\n%s",
                       status, strlen(body), strcmp(method, "HEAD") == 0 ? "" : body);
    if (len > 0) {
        ssize_t w = write(c, out, (size_t)len);
        (void)w;
    }
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    /* As the real kubelet (component-base verflag): the version, then exit. */
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("Kubernetes %s\n", LAB_KUBELET_VERSION);
        return 0;
    }

    pid_t pid = fork();
    if (pid < 0) {
        logf_('E', "command failed", "err=\"fork: cannot validate configuration\"");
        return 1;
    }
    if (pid == 0) {
        execv(KUBELET_CHECK, argv);
        perror(KUBELET_CHECK);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            logf_('E', "command failed", "err=\"waitpid failed\"");
            return 1;
        }
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return WIFEXITED(st) ? WEXITSTATUS(st) : 1;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(HEALTHZ_PORT);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
        char detail[256];
        snprintf(detail, sizeof detail, "err=\"listen tcp 127.0.0.1:%d: bind: %s\"", HEALTHZ_PORT,
                 strerror(errno));
        logf_('E', "Failed to start healthz server", detail);
        return 1;
    }
    logf_('I', "Starting healthz server", "address=\"127.0.0.1:10248\" path=\"/healthz\"");
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        respond(c);
        close(c);
    }
}
