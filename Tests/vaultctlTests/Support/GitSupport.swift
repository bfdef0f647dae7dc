#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Real git against the built vaultctl: a `git-credential-vaultctl` link to the binary first on PATH, a
/// global git config in the sandbox's HOME, no terminal prompts; and a local HTTP server (git http-backend
/// behind Python's http.server on 127.0.0.1) that demands one user and password by Basic authentication.
struct GitWorld {
    let sb: Sandbox
    let bin: String

    init(_ sb: Sandbox, helpers: [String] = ["vaultctl"]) throws {
        self.sb = sb
        bin = "\(sb.root)/bin"
        mkdir(bin, 0o700)
        try #require(symlink(Paths.vaultctl, "\(bin)/git-credential-vaultctl") == 0)
        try #require(symlink(Paths.vaultctl, "\(bin)/vaultctl") == 0)
        try setHelpers(helpers)
    }

    /// Replaces the global `credential.helper` list.
    func setHelpers(_ helpers: [String]) throws {
        let lines = helpers.map { "\thelper = \"\($0.replacingOccurrences(of: "\"", with: "\\\""))\"\n" }.joined()
        try #require(FileText.write("\(sb.home)/.gitconfig", "[credential]\n\(lines)"))
    }

    /// The environment git runs with: the sandbox's (vaultctl's folders, bus, PAM), a counting askpass.
    func environment(password: CountedPassword = .correct, extra: [String: String] = [:]) throws -> [String: String] {
        var env = try sb.environment(askpass: .unset)
        env["PATH"] = "\(bin):\(Paths.systemPATH)"
        env["VAULT_ASKPASS"] = try sb.countingAskpass(password)
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_TERMINAL_PROMPT"] = "0"
        return env.merging(extra) { $1 }
    }

    func git(_ args: [String], stdin: Stdin = .null, password: CountedPassword = .correct,
             extra: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        // git's reject and approve exit 0 when the helper failed: a race is told by the helper's words.
        try Sandbox.repeatingPAMWrapperRaces(anyStatus: true) {
            ProcessRunner.run(Paths.tool("git"), args, environment: try environment(password: password, extra: extra),
                              stdin: stdin, sourceLocation: sourceLocation).droppingPAMWrapperNoise()
        }
    }

    /// `git credential ACTION` with a description built from `fields` (in order).
    func credential(_ action: String, _ fields: [(String, String)], password: CountedPassword = .correct,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        let text = fields.map { "\($0.0)=\($0.1)\n" }.joined() + "\n"
        return try git(["credential", action], stdin: .text(text), password: password, sourceLocation: sourceLocation)
    }
}

/// A bare repository with one commit, served over HTTP on 127.0.0.1 by git http-backend, to a client that
/// authenticates as `user` with `password` (anything else gets 401 and a Basic challenge).
final class GitHTTPServer {
    let url: String
    let commit: String
    private let pid: pid_t

    init(in folder: String, user: String, password: String) throws {
        let env = Fixtures.baseEnvironment.merging(["HOME": folder, "GIT_CONFIG_NOSYSTEM": "1"]) { $1 }
        let setup = ProcessRunner.run(Paths.tool("sh"), ["-c", """
            set -e
            cd '\(folder)'
            git init -q --bare root/repo.git
            git -C root/repo.git symbolic-ref HEAD refs/heads/main
            git init -q src
            git -C src -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m one
            git -C src push -q ../root/repo.git HEAD:refs/heads/main
            git -C src rev-parse HEAD
            """], environment: env)
        try #require(setup.status == 0, "\(setup)")
        commit = setup.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(FileText.write("\(folder)/server.py", Self.script))
        // The password reaches the server in a file, not in its argv.
        try #require(FileText.write("\(folder)/account", "\(user)\n\(password)\n"))
        let portFile = "\(folder)/port"
        // The server's own bound (timeout) keeps it from outliving a test that died; deinit stops it sooner.
        let start = ProcessRunner.run(Paths.tool("sh"), ["-c", """
            timeout 300 python3 '\(folder)/server.py' '\(folder)/root' '\(portFile)' '\(folder)/account' \
              >'\(folder)/server.log' 2>&1 </dev/null & echo $!
            """], environment: env)
        try #require(start.status == 0, "\(start)")
        pid = pid_t(start.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        var port: String?
        for _ in 0..<100 {
            if let p = FileText.read(portFile), !p.isEmpty { port = p; break }
            usleep(50_000)
        }
        let bound = try #require(port, "the HTTP server did not start: \(FileText.read("\(folder)/server.log") ?? "")")
        url = "http://127.0.0.1:\(bound)/repo.git"
    }

    deinit {
        if pid > 0 { kill(pid, SIGTERM) }
    }

    static let script = #"""
    import base64, http.server, os, subprocess, sys

    root, port_file, account = sys.argv[1:4]
    with open(account) as f:
        user, password = f.read().splitlines()[:2]
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.serve()

        def do_POST(self):
            self.serve()

        def serve(self):
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="vaultctl-test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            env = {"GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                   "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": user,
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                   "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                   "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "PATH": os.environ["PATH"]}
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=30).stdout
            sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
            head, _, payload = out.partition(sep)
            status, headers = 200, []
            for line in head.decode().splitlines():
                key, _, value = line.partition(":")
                if key.lower() == "status":
                    status = int(value.split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#
}
