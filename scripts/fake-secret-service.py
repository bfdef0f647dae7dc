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
    lock-listed   Lock answers that it locked the collection (and then it is locked); Unlock unlocks it
    silent-after-alias  ReadAlias answers; every other call is never answered
    prompt-create      as provider, with a real key exchange; CreateItem answers with a prompt that
                       completes at once when run (as KeePassXC's does)
    prompt-silent      as prompt-create, but the prompt never completes until it is dismissed
    prompt-dismissed   as prompt-create, but running the prompt completes it as dismissed
    item-locked        as provider, but the item is locked (KeePassXC's "confirm access"); Unlock answers
                       with a prompt that never completes
    exit-mid-call      ReadAlias answers; the first search makes the provider exit without answering
    item-locked-allow  as item-locked, but the Unlock prompt completes at once, unlocking the item, whose
                       value is "allowed-secret" (sent encrypted under the session key)
    alias-race   gnome-keyring's first-call race: the first ReadAlias answers "/" and every search before
                 the second ReadAlias finds nothing; then as provider, with a real key exchange and the
                 value "allowed-secret"
    names-clients  as KeePassXC names its clients: its process is called "keepassxc" (so vaultctl searches it
                 as it searches KeePassXC: Locked first, then each collection), and at the first
                 Secret Service call of each connection it asks the bus for the connection's process and
                 reads its /proc/PID/exe, printing "client EXE" (or "client unreadable: WHY"), what it
                 holds ("client holds 0=socket 1=/dev/null ..."), then its parent's ("parent ..."); it drops its capabilities first (a provider running as the
                 user has none; run the client without them too, as setpriv --bounding-set=-all); otherwise
                 as provider, with a real key exchange and the value "allowed-secret"

It writes one line to stdout for each call a test may want to see: "prompted", "dismissed", "created".

It uses dbus-python (Debian python3-dbus) with the GLib main loop (python3-gi), as python3-dbusmock does.
"""
import os
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
         "silent-after-alias", "prompt-create", "prompt-silent", "prompt-dismissed", "item-locked",
         "item-locked-allow", "exit-mid-call", "alias-race", "names-clients"}
PROMPTING = {"prompt-create", "prompt-silent", "prompt-dismissed", "item-locked", "item-locked-allow"}
session_key = None
aliases_answered = 0
PROMPT_PATH = "/org/freedesktop/secrets/prompt/p1"
PRIME = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
if scenario not in KNOWN:
    sys.exit("fake-secret-service.py: unknown scenario " + repr(scenario))


class Failure(dbus.exceptions.DBusException):
    def __init__(self, name, message):
        super().__init__(message, name=name)


def refuse_everything():
    if scenario == "error-reply":
        raise Failure("org.freedesktop.DBus.Error.AccessDenied", "denied\nby the fake\tprovider")


collection_locked = scenario == "locked-empty"


def event(text):
    print(text, flush=True)


named_clients = set()


def name_client(sender):
    """names-clients: what KeePassXC does at a connection's first call (DBusMgr::serviceInfo and readProc):
    the connection's process from the bus, then its executable."""
    if scenario != "names-clients" or sender in named_clients:
        return
    named_clients.add(sender)
    bus = dbus.SessionBus()
    driver = dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")
    pid = int(driver.GetConnectionUnixProcessID(sender))
    try:
        event("client " + os.readlink("/proc/%d/exe" % pid))
    except OSError as e:
        event("client unreadable: " + e.strerror)
    # What it holds: its descriptors, in order ("socket" for any socket), or why they cannot be listed.
    try:
        fds = sorted(int(n) for n in os.listdir("/proc/%d/fd" % pid))
        held = ["socket" if t.startswith("socket:") else t for t in (os.readlink("/proc/%d/fd/%d" % (pid, n)) for n in fds)]
        event("client holds " + " ".join("%d=%s" % (n, t) for n, t in zip(fds, held)))
    except OSError as e:
        event("client holds unreadable: " + e.strerror)
    # Its parent too (KeePassXC reads the whole line of parents): vaultctl, when the client is its connector.
    with open("/proc/%d/stat" % pid) as f:
        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
    try:
        event("parent " + os.readlink("/proc/%d/exe" % ppid))
    except OSError as e:
        event("parent unreadable: " + e.strerror)


def never_answer():
    """Keeps the call unanswered: dbus-python sends no reply for an async method that never calls back."""
    return scenario == "silent-after-alias"


class Service(dbus.service.Object):
    @dbus.service.method(SERVICE, in_signature="s", out_signature="o", sender_keyword="sender")
    def ReadAlias(self, name, sender=None):
        name_client(sender)
        global aliases_answered
        aliases_answered += 1
        event("alias %d" % aliases_answered)
        if scenario == "alias-race" and aliases_answered == 1:
            return dbus.ObjectPath("/")
        return dbus.ObjectPath(COLLECTION_PATH if name == "default" else "/")

    @dbus.service.method(SERVICE, in_signature="sv", out_signature="vo",
                         async_callbacks=("reply", "error"), sender_keyword="sender")
    def OpenSession(self, algorithm, argument, reply, error, sender=None):
        name_client(sender)
        if never_answer():
            return
        refuse_everything()
        if scenario == "plain-only" or algorithm != "dh-ietf1024-sha256-aes128-cbc-pkcs7":
            raise Failure("org.freedesktop.DBus.Error.NotSupported", "Algorithm is not supported")
        if scenario == "bad-key":
            reply(dbus.Array([dbus.Byte(1)], signature="y", variant_level=1),
                  dbus.ObjectPath("/org/freedesktop/secrets/session/s1"))
            return
        if scenario in PROMPTING or scenario in ("alias-race", "names-clients"):
            # The server half of the exchange (libsecret's secret-session.c, with Python's cryptography).
            global session_key
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            y = int.from_bytes(os.urandom(32), "big")
            public = pow(2, y, PRIME).to_bytes(128, "big")
            shared = pow(int.from_bytes(bytes(argument), "big"), y, PRIME).to_bytes(128, "big")
            session_key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(shared)
            reply(dbus.Array([dbus.Byte(b) for b in public], signature="y", variant_level=1),
                  dbus.ObjectPath("/org/freedesktop/secrets/session/s1"))
            return
        raise Failure("org.freedesktop.DBus.Error.NotSupported", "this fake provider does no key exchange")

    @dbus.service.method(SERVICE, in_signature="a{ss}", out_signature="aoao", async_callbacks=("reply", "error"),
                         sender_keyword="sender")
    def SearchItems(self, attributes, reply, error, sender=None):
        name_client(sender)
        if never_answer():
            return
        if scenario == "exit-mid-call":
            event("exiting")
            os._exit(0)
        refuse_everything()
        found = [] if scenario == "locked-empty" else [dbus.ObjectPath(ITEM_PATH)]
        if scenario == "alias-race" and aliases_answered < 2:
            found = []
        if scenario == "alias-race":
            event("search found %d" % len(found))
        if scenario in ("item-locked", "item-locked-allow"):
            reply(dbus.Array([], signature="o"), dbus.Array(found, signature="o"))
        else:
            reply(dbus.Array(found, signature="o"), dbus.Array([], signature="o"))

    @dbus.service.method(SERVICE, in_signature="ao", out_signature="aoo")
    def Unlock(self, objects):
        global collection_locked
        event("unlock")
        if scenario == "lock-listed":
            collection_locked = False
            return dbus.Array([dbus.ObjectPath(COLLECTION_PATH)], signature="o"), dbus.ObjectPath("/")
        return dbus.Array([], signature="o"), dbus.ObjectPath(PROMPT_PATH)

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", async_callbacks=("reply", "error"),
                         sender_keyword="sender")
    def Get(self, interface, name, reply, error, sender=None):
        name_client(sender)
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
        global collection_locked
        refuse_everything()
        locked = [dbus.ObjectPath(COLLECTION_PATH)] if scenario == "lock-listed" else []
        collection_locked = collection_locked or scenario == "lock-listed"
        event("locked" if locked else "lock ignored")
        reply(dbus.Array(locked, signature="o"), dbus.ObjectPath("/"))


class Collection(dbus.service.Object):
    @dbus.service.method(COLLECTION, in_signature="a{ss}", out_signature="ao", async_callbacks=("reply", "error"),
                         sender_keyword="sender")
    def SearchItems(self, attributes, reply, error, sender=None):
        name_client(sender)
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
            reply(dbus.Boolean(collection_locked, variant_level=1))
        elif name == "Label":
            reply(dbus.String("Fake", variant_level=1))
        else:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "no such property")


    @dbus.service.method(COLLECTION, in_signature="a{sv}(oayays)b", out_signature="oo")
    def CreateItem(self, properties, secret, replace):
        if scenario not in PROMPTING:
            raise Failure("org.freedesktop.DBus.Error.NotSupported", "this fake provider stores nothing")
        return dbus.ObjectPath("/"), dbus.ObjectPath(PROMPT_PATH)


class Prompt(dbus.service.Object):
    @dbus.service.method("org.freedesktop.Secret.Prompt", in_signature="s", out_signature="")
    def Prompt(self, window_id):
        event("prompted")
        if scenario == "prompt-create":
            event("created")
            GLib.idle_add(lambda: self.Completed(False, dbus.ObjectPath(ITEM_PATH, variant_level=1)) and False)
        elif scenario == "item-locked-allow":
            GLib.idle_add(lambda: self.Completed(False, dbus.Array([dbus.ObjectPath(ITEM_PATH)], signature="o",
                                                                   variant_level=1)) and False)
        elif scenario == "prompt-dismissed":
            GLib.idle_add(lambda: self.Completed(True, dbus.String("", variant_level=1)) and False)

    @dbus.service.method("org.freedesktop.Secret.Prompt", in_signature="", out_signature="")
    def Dismiss(self):
        event("dismissed")
        self.Completed(True, dbus.String("", variant_level=1))

    @dbus.service.signal("org.freedesktop.Secret.Prompt", signature="bv")
    def Completed(self, dismissed, result):
        pass


class Item(dbus.service.Object):
    @dbus.service.method(ITEM, in_signature="o", out_signature="(oayays)")
    def GetSecret(self, session):
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        if session_key is None:
            raise Failure("org.freedesktop.Secret.Error.NoSession", "no session")
        event("secret")
        iv = os.urandom(16)
        pad = padding.PKCS7(128).padder()
        data = pad.update(b"allowed-secret") + pad.finalize()
        e = Cipher(algorithms.AES(session_key), modes.CBC(iv)).encryptor()
        value = e.update(data) + e.finalize()
        return (session, dbus.ByteArray(iv), dbus.ByteArray(value), "text/plain")

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", async_callbacks=("reply", "error"))
    def Get(self, interface, name, reply, error):
        if never_answer():
            return
        refuse_everything()
        if name == "Label":
            reply(dbus.String("Fake", variant_level=1))
        elif name == "Locked":
            # As the search says: locked in the scenarios whose search lists it locked.
            reply(dbus.Boolean(scenario in ("item-locked", "item-locked-allow"), variant_level=1))
        elif name == "Modified":
            reply(dbus.UInt64(1, variant_level=1))
        else:
            raise Failure("org.freedesktop.DBus.Error.UnknownProperty", "no such property")


def main():
    if scenario == "names-clients":
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, b"keepassxc", 0, 0, 0)  # PR_SET_NAME: /proc/PID/comm, as KeePassXC's own
        # No capabilities, as a provider running as the user has none: root's CAP_SYS_PTRACE (the tests run
        # as root) would read /proc/PID/exe of a process that is not dumpable.
        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
        none = (Data * 2)()
        if libc.capset(ctypes.byref(Header(0x20080522, 0)), none) != 0:
            sys.exit("fake-secret-service.py: capset: " + os.strerror(ctypes.get_errno()))
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    Service(bus, "/org/freedesktop/secrets")
    Collection(bus, COLLECTION_PATH)
    Item(bus, ITEM_PATH)
    Prompt(bus, PROMPT_PATH)
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
