// sd-bus, systemd's D-Bus library (pkg-config libsystemd). Imported only by Slots/SecretService/Bus/SDBus.swift.
#include <systemd/sd-bus.h>
