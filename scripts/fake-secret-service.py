#!/usr/bin/python3
"""A scripted Secret Service provider for vaultctl's tests: a real service object on a real bus.

    fake-secret-service.py SCENARIO      (DBUS_SESSION_BUS_ADDRESS names the bus)

It owns org.freedesktop.secrets on the bus and answers as SCENARIO says, to force what a real provider
rarely does. It prints "ready" once the name is owned. Scenarios:

    provider      one unlocked collection 'Fake', the default, that holds item 1 (label 'Fake') for every search
    plain-only    as provider, but OpenSession refuses every algorithm (org.freedesktop.DBus.Error.NotSupported)
    bad-key       as provider, but OpenSession answers with the public key [0x01]
    error-reply   ReadAlias answers; every other call gets AccessDenied with a multi-line message
    locked-empty  the collection is locked and every search finds nothing (as KeePassXC with a locked database)
    lock-ignored  Lock answers that it locked nothing
    lock-listed   Lock answers that it locked the collection
    silent-after-alias  ReadAlias answers; every other call is never answered

It uses dbus-python (Debian python3-dbus) with the GLib main loop (python3-gi), as python3-dbusmock does.
"""
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

SERVICE = "org.freedesktop.Secret.Service"
COLLECTION = "org.freedesktop.Secret.Collection"
ITEM = "org.freedesktop.Secret.Item"
PROPERTIES = "org.freedesktop.DBus.Properties"
COLLECTION_PATH = "/org/freedesktop/secrets/collection/fake"
ITEM_PATH = COLLECTION_PATH + "/1"

scenario = sys.argv[1] if len(sys.argv) > 1 else "provider"
KNOWN = {"provider", "plain-only", "bad-key", "error-reply", "locked-empty", "lock-ignored", "lock-listed",
         "silent-after-alias"}
if scenario not in KNOWN:
    sys.exit("fake-secret-service.py: unknown scenario " + repr(scenario))


class Failure(dbus.exceptions.DBusException):
    def __init__(self, name, message):
        super().__init__(message, name=name)


def refuse_everything():
    if scenario == "error-reply":
        raise Failure("org.freedesktop.DBus.Error.AccessDenied", "denied\nby the fake\tprovider")


def never_answer():
    """Keeps the call unanswered: dbus-python sends no reply for an async method that never calls back."""
    return scenario == "silent-after-alias"


class Service(dbus.service.Object):
    @dbus.service.method(SERVICE, in_signature="s", out_signature="o")
    def ReadAlias(self, name):
        return dbus.ObjectPath(COLLECTION_PATH if name == "default" else "/")

    @dbus.service.method(SERVICE, in_signature="sv", out_signature="vo",
                         async_callbacks=("reply", "error"))
    def OpenSession(self, algorithm, argument, reply, error):
        if never_answer():
            return
        refuse_everything()
        if scenario == "plain-only" or algorithm != "dh-ietf1024-sha256-aes128-cbc-pkcs7":
            raise Failure("org.freedesktop.DBus.Error.NotSupported", "Algorithm is not supported")
        if scenario == "bad-key":
            reply(dbus.Array([dbus.Byte(1)], signature="y", variant_level=1),
                  dbus.ObjectPath("/org/freedesktop/secrets/session/s1"))
            return
        raise Failure("org.freedesktop.DBus.Error.NotSupported", "this fake provider does no key exchange")

    @dbus.service.method(SERVICE, in_signature="a{ss}", out_signature="aoao", async_callbacks=("reply", "error"))
    def SearchItems(self, attributes, reply, error):
        if never_answer():
            return
        refuse_everything()
        found = [] if scenario == "locked-empty" else [dbus.ObjectPath(ITEM_PATH)]
        reply(dbus.Array(found, signature="o"), dbus.Array([], signature="o"))

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", async_callbacks=("reply", "error"))
    def Get(self, interface, name, reply, error):
        if never_answer():
            return
        refuse_everything()
        if name == "Collections":
            reply(dbus.Array([dbus.ObjectPath(COLLECTION_PATH)], signature="o", variant_level=1))
        else:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "no such property")

    @dbus.service.method(SERVICE, in_signature="ao", out_signature="aoo", async_callbacks=("reply", "error"))
    def Lock(self, objects, reply, error):
        if never_answer():
            return
        refuse_everything()
        locked = [dbus.ObjectPath(COLLECTION_PATH)] if scenario == "lock-listed" else []
        reply(dbus.Array(locked, signature="o"), dbus.ObjectPath("/"))


class Collection(dbus.service.Object):
    @dbus.service.method(COLLECTION, in_signature="a{ss}", out_signature="ao", async_callbacks=("reply", "error"))
    def SearchItems(self, attributes, reply, error):
        if never_answer():
            return
        refuse_everything()
        found = [] if scenario == "locked-empty" else [dbus.ObjectPath(ITEM_PATH)]
        reply(dbus.Array(found, signature="o"))

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", async_callbacks=("reply", "error"))
    def Get(self, interface, name, reply, error):
        if never_answer():
            return
        refuse_everything()
        if name == "Locked":
            reply(dbus.Boolean(scenario == "locked-empty", variant_level=1))
        elif name == "Label":
            reply(dbus.String("Fake", variant_level=1))
        else:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "no such property")


class Item(dbus.service.Object):
    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", async_callbacks=("reply", "error"))
    def Get(self, interface, name, reply, error):
        if never_answer():
            return
        refuse_everything()
        if name == "Label":
            reply(dbus.String("Fake", variant_level=1))
        elif name == "Modified":
            reply(dbus.UInt64(1, variant_level=1))
        else:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "no such property")


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    Service(bus, "/org/freedesktop/secrets")
    Collection(bus, COLLECTION_PATH)
    Item(bus, ITEM_PATH)
    name = dbus.service.BusName("org.freedesktop.secrets", bus, do_not_queue=True)
    print("ready", flush=True)
    loop = GLib.MainLoop()
    bus.add_signal_receiver(loop.quit, signal_name="Disconnected", dbus_interface="org.freedesktop.DBus.Local")
    try:
        loop.run()
    finally:
        del name


if __name__ == "__main__":
    main()
