/* The virtual rack's command client: hands one command to the rack's resident dispatcher.
 *
 *     dispatch-client SOCKET PYTHON NAME ARGS...
 *
 * Sends the dispatcher (simulator/dispatch.py) its stdin, stdout and stderr (as file
 * descriptors, so the command reads and writes them itself: byte for byte, tty or pipe), its
 * working directory, its environment and NAME ARGS, then waits for the command's exit status
 * and exits with it (or dies of the same signal). When no dispatcher answers on SOCKET it runs
 * the command the direct way, `PYTHON -m simulator.commands NAME ARGS...`: never a broken
 * command. Compiled once per source version by simulator/dispatch.py (gcc or cc).
 *
 * Request: "OSTARA2\0", then a 4-byte length (native order) and that many bytes of
 * NUL-terminated strings: cwd, umask (octal), argument count, NAME, ARGS..., then the
 * environment's "KEY=VALUE" entries. Answer: 4 bytes, the exit code (>= 0) or minus the
 * signal number.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static void direct(const char *python, int argc, char **argv) {
    /* argv: NAME ARGS... (argc entries) */
    char **args = calloc((size_t)argc + 4, sizeof(char *));
    if (!args) _exit(127);
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "simulator.commands";
    for (int i = 0; i < argc; i++) args[3 + i] = argv[i];
    execv(python, args);
    fprintf(stderr, "%s: cannot run %s: %s\n", argv[0], python, strerror(errno));
    _exit(127);
}

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    const char *name = path;
    int saved = -1;
    if (strlen(path) >= sizeof addr.sun_path) {
        /* A deep rack directory: connect from inside it (sun_path holds 107 bytes). */
        const char *slash = strrchr(path, '/');
        if (!slash) { close(fd); return -1; }
        char dir[PATH_MAX];
        size_t n = (size_t)(slash - path);
        if (n == 0 || n >= sizeof dir) { close(fd); return -1; }
        memcpy(dir, path, n);
        dir[n] = 0;
        saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (saved < 0 || chdir(dir) < 0) {
            if (saved >= 0) close(saved);
            close(fd);
            return -1;
        }
        name = slash + 1;
    }
    strncpy(addr.sun_path, name, sizeof addr.sun_path - 1);
    int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr);
    if (saved >= 0) {
        if (fchdir(saved) < 0) ok = -1;
        close(saved);
    }
    if (ok < 0) { close(fd); return -1; }
    return fd;
}

static int append(char **buf, size_t *len, size_t *cap, const char *text) {
    size_t n = strlen(text) + 1;
    if (*len + n > *cap) {
        size_t want = (*cap + n) * 2;
        char *grown = realloc(*buf, want);
        if (!grown) return -1;
        *buf = grown;
        *cap = want;
    }
    memcpy(*buf + *len, text, n);
    *len += n;
    return 0;
}

static int send_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t sent = send(fd, data, len, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += sent;
        len -= (size_t)sent;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: dispatch-client SOCKET PYTHON NAME ARGS...\n");
        return 2;
    }
    const char *socket_path = argv[1], *python = argv[2];
    int count = argc - 3;
    char **command = argv + 3;

    int fd = connect_to(socket_path);
    if (fd < 0) direct(python, count, command);

    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) direct(python, count, command);

    size_t len = 0, cap = 4096;
    char *body = malloc(cap);
    char number[32], mask[16];
    snprintf(number, sizeof number, "%d", count);
    mode_t old = umask(022);
    umask(old);
    snprintf(mask, sizeof mask, "%o", (unsigned)old);
    int bad = !body || append(&body, &len, &cap, cwd) || append(&body, &len, &cap, mask) ||
              append(&body, &len, &cap, number);
    for (int i = 0; !bad && i < count; i++) bad = append(&body, &len, &cap, command[i]);
    for (char **env = environ; !bad && *env; env++) bad = append(&body, &len, &cap, *env);
    if (bad) direct(python, count, command);

    /* The header, the length and our stdin/stdout/stderr in one message. */
    char head[12];
    memcpy(head, "OSTARA2", 8);
    uint32_t size = (uint32_t)len;
    memcpy(head + 8, &size, 4);
    struct iovec iov = {.iov_base = head, .iov_len = sizeof head};
    int fds[3] = {0, 1, 2};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    ssize_t sent;
    do sent = sendmsg(fd, &msg, MSG_NOSIGNAL); while (sent < 0 && errno == EINTR);
    if (sent != (ssize_t)sizeof head) {
        /* Nothing ran yet (the dispatcher took nothing or stopped): the direct way. */
        close(fd);
        direct(python, count, command);
    }
    if (send_all(fd, body, len) < 0) {
        fprintf(stderr, "%s: the virtual rack's dispatcher stopped\n", command[0]);
        return 255;
    }
    free(body);

    int32_t status;
    size_t got = 0;
    while (got < sizeof status) {
        ssize_t n = recv(fd, (char *)&status + got, sizeof status - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            fprintf(stderr, "%s: the virtual rack's dispatcher stopped\n", command[0]);
            return 255;
        }
        got += (size_t)n;
    }
    if (status < 0) {
        /* The command died of a signal: so do we, as its caller would see. */
        signal(-status, SIG_DFL);
        raise(-status);
        return 128 - status;
    }
    return status;
}
