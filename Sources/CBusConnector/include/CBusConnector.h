#ifndef VAULTCTL_CBUS_CONNECTOR_H
#define VAULTCTL_CBUS_CONNECTOR_H
/* The session-bus connector (bus_connector.c says why and how). No system header here: addresses are bytes
   (a struct sockaddr_un, at most VAULTCTL_BUS_ADDRESS_BYTES), so the socket headers stay in the C file. */

/* vaultctl's one argument that makes it the connector; its channel is standard input (a SOCK_SEQPACKET). */
#define VAULTCTL_BUS_CONNECTOR_ARGUMENT "--connect-session-bus-for-vaultctl"
/* How long the connector waits for the address, and then for vaultctl to close the channel. */
#define VAULTCTL_BUS_CONNECTOR_ADDRESS_MS 5000
#define VAULTCTL_BUS_CONNECTOR_HOLD_MS 120000
/* Room for an address (sizeof(struct sockaddr_un)). */
#define VAULTCTL_BUS_ADDRESS_BYTES 110

/* The connector's side: its exit status (sysexits); 64 with one line when run by hand. */
int vaultctl_run_bus_connector(void);

/* vaultctl's side. The absolute address (path or abstract name) the connected socket `fd` reached, into
   `address` (VAULTCTL_BUS_ADDRESS_BYTES) and `*length`: 0, or -errno. */
int vaultctl_bus_peer_address(int fd, void *address, unsigned int *length);
/* Sends the address on `channel`: 0, or -errno. */
int vaultctl_bus_connector_send(int channel, const void *address, unsigned int length);
/* The socket the connector handed over on `channel` within `milliseconds`, once it is a connected unix stream
   socket whose peer is at `address` and is the very process that answers on `reference` (SO_PEERCRED), and
   the connector said it is readable (within `milliseconds` more); else closed. The descriptor, or -errno: -ETIMEDOUT, -EPROTO (not exactly one descriptor), -EADDRNOTAVAIL. */
int vaultctl_bus_connector_receive(int channel, int milliseconds, const void *address, unsigned int length, int reference);
/* The connector's word, after the socket, that it is readable (dumpable) now: 0, or -errno. */
int vaultctl_bus_connector_say_readable(int channel);
/* Sends the descriptor `fd` on `channel` (one byte with SCM_RIGHTS): 0, or -errno. */
int vaultctl_bus_connector_hand_over(int channel, int fd);
#endif
