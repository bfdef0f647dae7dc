import Testing
@testable import VaultRules

@Suite struct ProcStatTests {
    @Test func plainLineParses() {
        let stat = ProcStat.parse("14229 (bash) S 14228 14229 14229 34816 14230 4194560 5000 0 0 0 1 2 0 0 20 0 1 0")

        #expect(stat == ProcStat(pid: 14229, comm: "bash", ppid: 14228, session: 14229, ttyNr: 34816))
    }

    @Test func commWithSpacesAndParenthesesParses() {
        let stat = ProcStat.parse("42 (a) b (S) 7 c) R 41 42 40 0 -1 4194304 101 0")

        #expect(stat == ProcStat(pid: 42, comm: "a) b (S) 7 c", ppid: 41, session: 40, ttyNr: 0))
    }

    @Test func commThatLooksLikeSshdWithFakeFieldsParses() {
        let stat = ProcStat.parse("9 (x) S 1 1 1 0) S 8 9 9 0 -1")

        #expect(stat?.comm == "x) S 1 1 1 0")
        #expect(stat?.ppid == 8)
    }

    @Test func commThatIsNotUTF8Parses() {
        let bytes = Array("7 (".utf8) + [0xff, 0xfe, 0x29] + Array(") S 1 7 7 0 -1".utf8)

        #expect(ProcStat.parse(bytes)?.ppid == 1)
    }

    @Test(arguments: ["", "14229 bash S 1 1 1 0", "14229 (bash) S 1 1 1", "(bash) S 1 1 1 0", "x (bash) S 1 1 1 0",
                      "14229 (bash) S x 1 1 0", "14229 (bash) S -1 1 1 0", "14229 (bash) 1 1 1 0", "0 (bash) S 1 1 1 0",
                      "14229(bash) S 1 1 1 0", "99999999999 (bash) S 1 1 1 0"])
    func malformedLineIsRejected(line: String) {
        #expect(ProcStat.parse(line) == nil)
    }

    // MARK: Ancestry

    static func table(_ rows: [(Int32, String, Int32)]) -> (Int32) -> ProcStat? {
        let byPID = Dictionary(uniqueKeysWithValues: rows.map { ($0.0, ProcStat(pid: $0.0, comm: $0.1, ppid: $0.2, session: 0, ttyNr: 0)) })
        return { byPID[$0] }
    }

    @Test func ancestryWalksToPidOne() {
        let read = Self.table([(300, "bash", 200), (200, "sshd", 100), (100, "sshd", 1), (1, "systemd", 0)])

        #expect(ProcStat.ancestry(from: 300, read: read).map(\.comm) == ["bash", "sshd", "sshd", "systemd"])
    }

    @Test func ancestryStopsAtAnUnreadableParent() {
        let read = Self.table([(300, "bash", 200), (100, "sshd", 1)])

        #expect(ProcStat.ancestry(from: 300, read: read).map(\.pid) == [300])
    }

    @Test func ancestryStopsAtTheTopOfAPidNamespace() {
        let read = Self.table([(5, "bash", 1), (1, "sshd", 0)])

        #expect(ProcStat.ancestry(from: 5, read: read).map(\.comm) == ["bash", "sshd"])
    }

    @Test func ancestryStopsAtALoop() {
        let read = Self.table([(300, "a", 200), (200, "b", 300)])

        #expect(ProcStat.ancestry(from: 300, read: read).map(\.pid) == [300, 200])
    }

    @Test func ancestryIsBounded() {
        let read: (Int32) -> ProcStat? = { ProcStat(pid: $0, comm: "x", ppid: $0 + 1, session: 0, ttyNr: 0) }

        #expect(ProcStat.ancestry(from: 2, maxSteps: 64, read: read).count == 64)
    }

    @Test(arguments: [("sshd", true), ("sshd-session", true), ("sshd-auth", true), ("dropbear", true), ("tailscaled", true),
                      ("ssh", false), ("bash", false), ("xsshd", false), ("tailscale", false)])
    func sshServersAreRecognised(comm: String, isServer: Bool) {
        #expect(ProcStat.isSSHServer(comm) == isServer)
    }

    @Test func tailscaledSocketsAreNotRead() {
        #expect(!ProcStat.holdsSessionSocket("tailscaled"))
        #expect(ProcStat.holdsSessionSocket("sshd-session"))
    }
}
