/* The session-bus connector: both ends of it. A Secret Service provider that names its clients by the
   executable at /proc/PID/exe of the connection's process (KeePassXC: "invalid executable path" otherwise)
   cannot read vaultctl's, which is not dumpable from its first constructor on. The bus takes a connection's
   process from the socket's credentials, which are those of the process that called connect(2). So vaultctl
   starts a copy of itself, the connector, that connects a socket to the address vaultctl's own connection
   reached, hands it over and then, holding nothing but the channel (no socket, no secret, no pipe to the
   gate), makes itself dumpable so that the provider can read its /proc/PID/exe, until vaultctl closes the
   channel (its first call to the provider answered). vaultctl speaks the whole protocol on the socket with
   sd-bus (authentication, Hello, the calls), so the connector never sees a byte of it.

   The connector runs in a constructor of vaultctl (Sources/CStartHardening/bus_connector.c), before main,
   and ends there: no Swift code runs dumpable. The socket types stay in this file: the public header
   (include/CBusConnector.h) names none, so no Swift module takes the socket headers in as its own. */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "CBusConnector.h"

/* Whether `address` (of `length` bytes) names an absolute path or an abstract name: a relative path would be
   resolved against whichever folder the process is in. */
static int vaultctl_bus_address_is_absolute(const struct sockaddr_un *address, socklen_t length) {
    return length > (socklen_t)offsetof(struct sockaddr_un, sun_path) && address->sun_family == AF_UNIX
        && (address->sun_path[0] == '/' || address->sun_path[0] == 0);
}

/* The hand-over's one message, the same on both ends: one byte, and room for one descriptor. */
struct one_descriptor_message {
    char byte;
    struct iovec data;
    struct msghdr header;
    union { char space[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
};

static void one_descriptor_message_init(struct one_descriptor_message *m) {
    memset(m, 0, sizeof *m);
    m->data.iov_base = &m->byte;
    m->data.iov_len = 1;
    m->header.msg_iov = &m->data;
    m->header.msg_iovlen = 1;
    m->header.msg_control = m->control.space;
    m->header.msg_controllen = sizeof m->control.space;
}

/* Sends the descriptor `fd` on `channel` (one byte with SCM_RIGHTS): 0, or -errno. */
int vaultctl_bus_connector_hand_over(int channel, int fd) {
    struct one_descriptor_message message;
    one_descriptor_message_init(&message);
    struct cmsghdr *rights = CMSG_FIRSTHDR(&message.header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(rights), &fd, sizeof fd);
    return sendmsg(channel, &message.header, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 ? 0 : -errno;
}

/* Tells vaultctl on `channel` that the connector is readable (dumpable) now: one byte, "r". 0, or -errno. */
int vaultctl_bus_connector_say_readable(int channel) {
    return send(channel, "r", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 ? 0 : -errno;
}

/* The connector's side; its exit status (sysexits). 0: the socket was handed over. Run by hand (standard
   input not vaultctl's channel), it says so in one line and ends with 64. */
int vaultctl_run_bus_connector(void) {
    static const char byHand[] = "vaultctl: " VAULTCTL_BUS_CONNECTOR_ARGUMENT " is vaultctl's own: it connects "
        "the session bus for the vaultctl that started it, on its standard input; it is not a command.\n";
    const int channel = 0;
    int type = 0;
    socklen_t size = sizeof type;
    if (getsockopt(channel, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_SEQPACKET) {
        (void)!write(2, byHand, sizeof byHand - 1);
        return 64;
    }
    struct pollfd wait = { channel, POLLIN, 0 };
    if (poll(&wait, 1, VAULTCTL_BUS_CONNECTOR_ADDRESS_MS) != 1) return 75;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    ssize_t length = recv(channel, &address, sizeof address, MSG_DONTWAIT);
    if (length < 0 || !vaultctl_bus_address_is_absolute(&address, (socklen_t)length)) return 65;
    /* Non-blocking: a full backlog is EAGAIN at once (not a wait in connect), tried again for at most ~1 s,
       as BusConnection.open does. */
    int bus = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (bus < 0) return 69;
    for (int tries = 0; connect(bus, (const struct sockaddr *)&address, (socklen_t)length) != 0; tries++) {
        if (errno != EAGAIN || tries >= 1000) return 69;
        usleep(1000);
    }
    if (vaultctl_bus_connector_hand_over(channel, bus) != 0) return 69;
    (void)close(bus);
    /* Now it holds only the channel, on which vaultctl reads nothing more. */
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    /* Only now may vaultctl speak on the socket: the provider reads this process at the first call. */
    if (vaultctl_bus_connector_say_readable(channel) != 0) return 69;
    (void)poll(&wait, 1, VAULTCTL_BUS_CONNECTOR_HOLD_MS);
    return 0;
}

/* vaultctl's side. The address the connected socket `fd` reached (getpeername(2)): 0, or -errno. */
int vaultctl_bus_peer_address(int fd, void *address_buffer, unsigned int *length) {
    struct sockaddr_un *address = address_buffer;
    memset(address, 0, sizeof *address);
    *length = sizeof *address;
    if (getpeername(fd, (struct sockaddr *)address, length) != 0) return -errno;
    if (!vaultctl_bus_address_is_absolute(address, *length)) return -EAFNOSUPPORT;
    return 0;
}

/* Whether the peers of the sockets `a` and `b` are the same process (SO_PEERCRED: pid, uid and gid). */
static int vaultctl_same_peer_process(int a, int b) {
    struct { pid_t pid; uid_t uid; gid_t gid; } x, y;  /* struct ucred, declared by glibc only under _GNU_SOURCE */
    socklen_t xs = sizeof x, ys = sizeof y;
    return getsockopt(a, SOL_SOCKET, SO_PEERCRED, &x, &xs) == 0 && getsockopt(b, SOL_SOCKET, SO_PEERCRED, &y, &ys) == 0
        && x.pid == y.pid && x.uid == y.uid && x.gid == y.gid && x.pid > 0;
}

/* Sends the address on `channel`: 0, or -errno. */
int vaultctl_bus_connector_send(int channel, const void *address, unsigned int length) {
    return send(channel, address, length, MSG_NOSIGNAL) == (ssize_t)length ? 0 : -errno;
}

/* The socket the connector handed over on `channel`, within `milliseconds`, once it is a connected unix
   stream socket whose peer is at `address` and is the very process that answers on `reference` (vaultctl's own
   connection: SO_PEERCRED of both, the bus daemon's pid, uid and gid; a listener bound at the same path
   after a rename is another process). Anything else is closed. The descriptor, or -errno: -ETIMEDOUT,
   -EPROTO (a message without exactly one descriptor), -EADDRNOTAVAIL (another peer). */
int vaultctl_bus_connector_receive(int channel, int milliseconds, const void *address, unsigned int length,
                                   int reference) {
    struct pollfd wait = { channel, POLLIN, 0 };
    int ready = poll(&wait, 1, milliseconds);
    if (ready == 0) return -ETIMEDOUT;
    if (ready < 0) return -errno;
    struct one_descriptor_message message;
    one_descriptor_message_init(&message);
    ssize_t got = recvmsg(channel, &message.header, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (got < 0) return -errno;
    struct cmsghdr *rights = CMSG_FIRSTHDR(&message.header);
    if (got != 1 || (message.header.msg_flags & MSG_CTRUNC) || rights == NULL || rights->cmsg_level != SOL_SOCKET
        || rights->cmsg_type != SCM_RIGHTS || rights->cmsg_len != CMSG_LEN(sizeof(int))) {
        if (rights != NULL && rights->cmsg_type == SCM_RIGHTS) {
            /* close whatever came, so nothing stray stays open */
            int *fds = (int *)CMSG_DATA(rights);
            size_t count = (rights->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; i++) (void)close(fds[i]);
        }
        return -EPROTO;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(rights), sizeof fd);
    struct stat st;
    int type = 0, domain = 0;
    socklen_t size = sizeof type, dsize = sizeof domain;
    struct sockaddr_un peer;
    unsigned int peer_length;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)
        || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM
        || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dsize) != 0 || domain != AF_UNIX
        || vaultctl_bus_peer_address(fd, &peer, &peer_length) != 0
        || peer_length != length || memcmp(&peer, address, length) != 0
        || !vaultctl_same_peer_process(fd, reference)) {
        (void)close(fd);
        return -EADDRNOTAVAIL;
    }
    /* Then the word that the connector is readable: used before it, the socket's first call could reach a
       provider that finds the connector not dumpable yet (seen under load). A descriptor sent with it is
       dropped by the kernel (no room for it here). */
    wait.revents = 0;
    char word = 0;
    if (poll(&wait, 1, milliseconds) != 1 || recv(channel, &word, 1, MSG_DONTWAIT) != 1 || word != 'r') {
        (void)close(fd);
        return -ETIMEDOUT;
    }
    return fd;
}

