#!/usr/bin/python3
"""Minimal reproducer: gnome-keyring-daemon 42.1 (Debian 12) dies with
  GLib-ERROR: g_variant_new: expected GVariant of type 'v' but received value has type '(null)'
when Secret.Service.OpenSession is the FIRST call of a brand-new bus connection and the
daemon handles it before its (idle-scheduled) per-client registration has run.

usage: /usr/bin/python3 docs/gnome-keyring-crash/repro.py [--mode open|ping-open|no-session]
                                               [--workers 4] [--seconds 150] [--algorithm plain|dh]
  open       (default) each iteration: new connection, OpenSession first, disconnect  -> crashes
  ping-open  new connection, Peer.Ping (waits for reply), then OpenSession           -> control
  no-session new connection, SearchItems first (no OpenSession)                     -> control
Starts its own dbus-daemon + gnome-keyring-daemon under a temporary folder, stops both,
never runs longer than --seconds (+ ~15 s). Exit status 1 if the daemon died, 0 if it survived.
"""
import argparse, multiprocessing as mp, os, random, shutil, subprocess, sys, tempfile, time
import dbus, dbus.lowlevel as ll

SVC, S, SI = 'org.freedesktop.secrets', '/org/freedesktop/secrets', 'org.freedesktop.Secret.Service'
# RFC 2409 Oakley group 2 (what gnome-keyring calls ietf-ike-grp-modp-1024), generator 2
P = int('FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A0879'
        '8E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B'
        '0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF', 16)

def call(bus, path, iface, member, sig=None, *args, timeout=25):
    m = ll.MethodCallMessage(SVC, path, iface, member)
    if sig: m.append(*args, signature=sig)
    return bus.send_message_with_reply_and_block(m, timeout)

def open_session(bus, algorithm):
    if algorithm == 'plain':
        return call(bus, S, SI, 'OpenSession', 'sv', 'plain', dbus.String('', variant_level=1))
    pub = pow(2, random.getrandbits(256), P).to_bytes(128, 'big')   # vaultctl's algorithm
    return call(bus, S, SI, 'OpenSession', 'sv', 'dh-ietf1024-sha256-aes128-cbc-pkcs7',
                dbus.ByteArray(pub, variant_level=1))

def worker(mode, algorithm, stop_at, q):
    n = 0
    while time.time() < stop_at:
        bus = dbus.SessionBus(private=True)
        try:
            if mode == 'ping-open':
                call(bus, S, 'org.freedesktop.DBus.Peer', 'Ping')
            if mode == 'no-session':
                call(bus, S, SI, 'SearchItems', 'a{ss}', {'xdg:schema': 'org.vaultctl.Slot'})
            else:
                open_session(bus, algorithm)
            n += 1
        except dbus.DBusException as e:
            q.put((n, e.get_dbus_name(), e.get_dbus_message(), time.time())); bus.close(); return
        bus.close()
    q.put((n, None, None, time.time()))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', default='open', choices=['open', 'ping-open', 'no-session'])
    ap.add_argument('--workers', type=int, default=4)
    ap.add_argument('--seconds', type=float, default=150)
    ap.add_argument('--algorithm', default='plain', choices=['plain', 'dh'])
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix='gk-crash-')
    home = os.path.join(d, 'home'); os.makedirs(home + '/.local/share')
    open(d + '/bus.conf', 'w').write(f'''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd"><busconfig><type>session</type>
<listen>unix:dir={d}</listen><auth>EXTERNAL</auth><policy context="default">
<allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>''')
    bus_p = subprocess.Popen(['dbus-daemon', '--config-file=' + d + '/bus.conf', '--nofork', '--print-address=1'],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    gk = None
    try:
        addr = bus_p.stdout.readline().strip()
        os.environ.update(DBUS_SESSION_BUS_ADDRESS=addr, HOME=home, XDG_RUNTIME_DIR=d,
                          XDG_DATA_HOME=home + '/.local/share')
        os.environ.pop('DISPLAY', None)
        log = open(d + '/gnome-keyring.log', 'w')
        gk = subprocess.Popen(['gnome-keyring-daemon', '--unlock', '--components=secrets', '--foreground'],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)
        gk.stdin.write(b'pw'); gk.stdin.close()          # login keyring created unlocked, password "pw"
        t = time.time()
        while True:                                      # wait until it owns the name and answers
            try:
                b = dbus.SessionBus(private=True)
                call(b, S, 'org.freedesktop.DBus.Properties', 'Get', 'ss', SI, 'Collections', timeout=2)
                b.close(); break
            except dbus.DBusException:
                if time.time() - t > 10 or gk.poll() is not None: sys.exit('gnome-keyring did not start')
                time.sleep(0.1)
        print(f'bus {addr}\ndaemon pid {gk.pid}, log {d}/gnome-keyring.log\n'
              f'mode={a.mode} algorithm={a.algorithm} workers={a.workers} limit={a.seconds:.0f}s', flush=True)
        q = mp.Queue(); t0 = time.time(); stop_at = t0 + a.seconds
        procs = [mp.Process(target=worker, args=(a.mode, a.algorithm, stop_at, q)) for _ in range(a.workers)]
        for p in procs: p.start()
        died = None
        while time.time() < stop_at + 10 and any(p.is_alive() for p in procs):
            if died is None and gk.poll() is not None: died = time.time() - t0
            time.sleep(0.05)
        if died is None and gk.poll() is not None: died = time.time() - t0
        results = []
        for _ in procs:
            try: results.append(q.get(timeout=10))
            except Exception: pass
        for p in procs:
            p.join(5)
            if p.is_alive(): p.kill()
        total = sum(r[0] for r in results)
        if died is not None:
            print(f'DAEMON DIED after {died:.1f} s, {total} connections; exit status {gk.returncode} '
                  f'(negative = killed by signal {-gk.returncode} {"SIGTRAP" if gk.returncode == -5 else ""})')
        else:
            print(f'daemon survived {a.seconds:.0f} s, {total} connections')
        for r in results:
            if r[1]: print(f'client saw: {r[1]}: {r[2]}')
        print('--- daemon log (last lines):')
        lines = [l for l in open(d + '/gnome-keyring.log').read().splitlines() if l.strip()]
        print('\n'.join(l for l in lines if 'AccessDenied' not in l)[-1800:])
        return 1 if died is not None else 0
    finally:
        if gk is not None and gk.poll() is None:
            gk.terminate()
            try: gk.wait(5)
            except subprocess.TimeoutExpired: gk.kill()
        bus_p.terminate()
        try: bus_p.wait(5)
        except subprocess.TimeoutExpired: bus_p.kill()
        shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__':
    sys.exit(main())
