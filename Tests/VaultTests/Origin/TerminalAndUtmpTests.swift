#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import VaultRules

@Suite struct TerminalAndUtmpTests {
    // MARK: Device numbers

    @Test func kernelTtyNumberDecodes() {
        #expect(ControllingTerminal.kernelDevice(34816) == .init(major: 136, minor: 0))    // pts/0
        #expect(ControllingTerminal.kernelDevice(34819) == .init(major: 136, minor: 3))    // pts/3
        #expect(ControllingTerminal.kernelDevice(1025) == .init(major: 4, minor: 1))       // tty1
        #expect(ControllingTerminal.kernelDevice(0x10882C) == .init(major: 136, minor: 300))  // pts/300: minor bits above 8
    }

    @Test func glibcDeviceNumberDecodes() {
        #expect(ControllingTerminal.glibcDevice(0x8803) == .init(major: 136, minor: 3))
        #expect(ControllingTerminal.glibcDevice(0x10882C) == .init(major: 136, minor: 300))
    }

    @Test func terminalNamesFollowTheDevice() {
        #expect(ControllingTerminal.candidateLines(.init(major: 136, minor: 3)) == ["pts/3"])
        #expect(ControllingTerminal.candidateLines(.init(major: 137, minor: 2)) == ["pts/2", "pts/258"])
        #expect(ControllingTerminal.candidateLines(.init(major: 4, minor: 2)) == ["tty2"])
        #expect(ControllingTerminal.candidateLines(.init(major: 4, minor: 64)) == ["ttyS0"])
        #expect(ControllingTerminal.candidateLines(.init(major: 1, minor: 3)) == [])
    }

    @Test func noControllingTerminalHasNoLine() {
        #expect(ControllingTerminal.line(ttyNr: 0) == nil)
    }

    @Test func devPrefixIsStripped() {
        #expect(ControllingTerminal.stripDev("/dev/pts/3") == "pts/3")
        #expect(ControllingTerminal.stripDev("/dev/tty1") == "tty1")
    }

    // MARK: utmp records

    static func entry(type: Int32, line: String, host: [UInt8], pid: Int32) -> utmpx {
        var e = utmpx()
        e.ut_type = Int16(type)
        e.ut_pid = pid
        withUnsafeMutableBytes(of: &e.ut_line) { raw in for (i, b) in line.utf8.prefix(raw.count).enumerated() { raw[i] = b } }
        withUnsafeMutableBytes(of: &e.ut_host) { raw in for (i, b) in host.prefix(raw.count).enumerated() { raw[i] = b } }
        return e
    }

    @Test func userProcessRecordReadsLineHostAndPid() {
        let record = UtmpRecords.record(Self.entry(type: USER_PROCESS, line: "pts/3", host: Array("100.64.0.1".utf8), pid: 77))

        #expect(record == UtmpRecords.Record(line: "pts/3", host: "100.64.0.1", pid: 77))
    }

    @Test func fullHostWithoutTerminatorIsReadToItsEnd() {
        let size = MemoryLayout.size(ofValue: utmpx().ut_host)
        let record = UtmpRecords.record(Self.entry(type: USER_PROCESS, line: "pts/3", host: [UInt8](repeating: 0x61, count: size), pid: 1))

        #expect(record?.host == String(repeating: "a", count: size))
        #expect(record?.line == "pts/3")
    }

    @Test func otherRecordTypesAreSkipped() {
        #expect(UtmpRecords.record(Self.entry(type: DEAD_PROCESS, line: "pts/3", host: [], pid: 1)) == nil)
        #expect(UtmpRecords.record(Self.entry(type: LOGIN_PROCESS, line: "tty1", host: [], pid: 1)) == nil)
    }

    @Test func hostForLinePrefersOurAncestorsRecord() {
        let records = [UtmpRecords.Record(line: "pts/3", host: "192.168.1.20", pid: 10),
                       UtmpRecords.Record(line: "pts/3", host: "100.64.0.1", pid: 20),
                       UtmpRecords.Record(line: "pts/4", host: "10.0.0.1", pid: 30)]

        #expect(UtmpRecords.host(forLine: "pts/3", preferring: [20], in: records) == "100.64.0.1")
        #expect(UtmpRecords.host(forLine: "pts/3", preferring: [10], in: records) == "192.168.1.20")
        #expect(UtmpRecords.host(forLine: "pts/3", preferring: [], in: records) == "100.64.0.1")
        #expect(UtmpRecords.host(forLine: "pts/9", preferring: [], in: records) == nil)
    }

    @Test func readingTheSystemUtmpReturns() {
        _ = UtmpRecords.userProcesses()
    }
}
