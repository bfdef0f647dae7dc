import TestSupport
import Foundation
import Testing
import Slots
@testable import JSON
@testable import Vault
@testable import VaultRules

/// Files exactly as the version that used `JSONEncoder` wrote them (pretty, sorted keys, `\/` escaped, keys
/// in declaration order where not sorted) still read, and what is written now reads back the same.
@Suite struct EarlierFilesTests {
    let folder = TemporaryFolder()
    var config: String { folder.appending("config") }
    var state: String { folder.appending("state") }

    private func write(_ path: String, _ text: String) throws {
        try SecureFile.ensurePrivateFolder(Paths.folder(of: path))
        try SecureFile.write(path, Array(text.utf8))
    }

    private func text(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    // MARK: modes.json

    @Test func modeRecordWrittenByJSONEncoderIsRead() throws {
        try write("\(config)/modes.json", """
            {
              "slots" : {
                "github" : "sync",
                "recovery-code" : "device",
                "wifi" : "device"
              },
              "version" : 1
            }
            """)

        #expect(try ModeRecord(folder: config).load()
                == [name("github"): .sync, name("recovery-code"): .device, name("wifi"): .device])
    }

    @Test func emptyModeRecordWrittenByJSONEncoderIsRead() throws {
        try write("\(config)/modes.json", "{\n  \"slots\" : {\n\n  },\n  \"version\" : 1\n}")

        #expect(try ModeRecord(folder: config).load().isEmpty)
    }

    @Test func modeRecordIsWrittenPrettyWithSortedKeys() throws {
        let record = ModeRecord(folder: config)
        try record.set(name("wifi"), .device)
        try record.set(name("github"), .sync)
        try record.set(name("a10"), .sync)
        try record.set(name("a9"), .device)

        #expect(try text("\(config)/modes.json") == """
            {
              "slots" : {
                "a10" : "sync",
                "a9" : "device",
                "github" : "sync",
                "wifi" : "device"
              },
              "version" : 1
            }
            """)
    }

    @Test func modeRecordWithAnUnknownModeIsNotARecord() throws {
        try write("\(config)/modes.json", #"{"slots":{"wifi":"cloud"},"version":1}"#)

        let error = #expect(throws: VaultError.self) { try ModeRecord(folder: config).load() }
        #expect(error?.configurationPath == "\(config)/modes.json")
    }

    @Test func modeRecordWithADuplicateSlotIsNotARecord() throws {
        try write("\(config)/modes.json", #"{"slots":{"wifi":"sync","wifi":"device"},"version":1}"#)

        let error = #expect(throws: VaultError.self) { try ModeRecord(folder: config).load() }
        #expect(error?.configurationPath == "\(config)/modes.json")
    }

    // MARK: ratelimit.json

    @Test func rateLimitWrittenByJSONEncoderIsRead() throws {
        try write("\(state)/ratelimit.json", #"{"blockedUntil":1764412700.123456,"failures":[1764412345.123456,1764412399.5],"pending":[{"answered":true,"pid":4242,"time":1764412400.25},{"pid":4243,"time":1764412401}],"version":1}"#)
        let file = StateFile(folder: state, name: "ratelimit.json", empty: RateLimiter.Document())

        let doc = try file.load()

        #expect(doc.version == 1)
        #expect(doc.failures == [1764412345.123456, 1764412399.5])
        #expect(doc.pending == [RateLimiter.Pending(pid: 4242, time: 1764412400.25, answered: true),
                                RateLimiter.Pending(pid: 4243, time: 1764412401)])
        #expect(doc.blockedUntil == 1764412700.123456)
    }

    @Test func rateLimitIsWrittenAsJSONEncoderWroteIt() throws {
        let file = StateFile(folder: state, name: "ratelimit.json", empty: RateLimiter.Document())
        try file.update { doc in
            doc.failures = [1764412345.123456, 1764412399.5]
            doc.pending = [RateLimiter.Pending(pid: 4242, time: 1764412400.25, answered: true),
                           RateLimiter.Pending(pid: 4243, time: 1764412401)]
            doc.blockedUntil = 1764412700.123456
        }

        #expect(try text("\(state)/ratelimit.json") == #"{"blockedUntil":1764412700.123456,"failures":[1764412345.123456,1764412399.5],"pending":[{"answered":true,"pid":4242,"time":1764412400.25},{"pid":4243,"time":1764412401}],"version":1}"#)
        try file.update { doc in doc = RateLimiter.Document() }
        #expect(try text("\(state)/ratelimit.json") == #"{"failures":[],"version":1}"#)
    }

    @Test func rateLimitWithNullOptionalsAndUnknownMembersIsRead() throws {
        try write("\(state)/ratelimit.json", #"{"failures":[1],"pending":null,"blockedUntil":null,"later":{"x":1},"version":1}"#)
        let doc = try StateFile(folder: state, name: "ratelimit.json", empty: RateLimiter.Document()).load()

        #expect(doc.failures == [1])
        #expect(doc.pending == nil && doc.blockedUntil == nil)
    }

    @Test(arguments: [#"{"version":1}"#, #"{"failures":[],"version":"1"}"#, #"{"failures":["1"],"version":1}"#,
                      #"{"failures":[],"pending":[{"pid":1}],"version":1}"#, #"{"failures":[],"pending":[{"pid":4294967296,"time":1}],"version":1}"#,
                      #"[]"#, #"{"failures":[],"version":1} x"#])
    func rateLimitOfTheWrongShapeIsDamaged(text: String) throws {
        try write("\(state)/ratelimit.json", text)
        let file = StateFile(folder: state, name: "ratelimit.json", empty: RateLimiter.Document())

        let error = #expect(throws: VaultError.self) { try file.load() }
        #expect(error?.configurationPath == "\(state)/ratelimit.json")
    }

    // MARK: supply.json

    @Test func supplyStateWrittenByJSONEncoderIsRead() throws {
        try write("\(state)/supply.json", #"{"slots":{"luks":{"allowed":false},"ssh-key":{"allowed":true,"lastSupply":{"origin":"ssh from 100.64.1.2\/10 per \"utmp\"","time":1764412345.123456}},"sudo":{"lastSupply":{"origin":"local session","time":1800000123}}},"version":1}"#)
        let supply = SupplyState(stateFolder: state, allowByDefault: true)

        #expect(try supply.isAllowed(name("luks")) == false)
        #expect(try supply.isAllowed(name("ssh-key")) == true)
        #expect(try supply.isAllowed(name("sudo")) == true, "no setting: the default")
        #expect(try supply.lastSupply(name("ssh-key"))
                == SupplyState.LastSupply(time: 1764412345.123456, origin: #"ssh from 100.64.1.2/10 per "utmp""#))
        #expect(try supply.lastSupply(name("sudo")) == SupplyState.LastSupply(time: 1800000123, origin: "local session"))
        #expect(try supply.lastSupply(name("luks")) == nil)
    }

    @Test func supplyStateIsWrittenCompactWithSortedKeysAndSlashesAsThey() throws {
        let supply = SupplyState(stateFolder: state, allowByDefault: false)
        try supply.setAllowed(name("ssh-key"), true)
        try supply.recordSupply(name("ssh-key"), time: 1764412345.123456, origin: "ssh from 100.64.1.2/10")
        try supply.recordSupply(name("sudo"), time: 1800000123, origin: "local session")

        // The one difference from JSONEncoder: "/" is no longer written as "\/" (both read the same).
        #expect(try text("\(state)/supply.json") == #"{"slots":{"ssh-key":{"allowed":true,"lastSupply":{"origin":"ssh from 100.64.1.2/10","time":1764412345.123456}},"sudo":{"lastSupply":{"origin":"local session","time":1800000123}}},"version":1}"#)
    }

    // MARK: recovery.json

    @Test func copiedMarkWrittenByJSONEncoderIsRead() throws {
        let code = RecoveryCode.generate()
        let mark = CopiedMark(folder: config)
        try mark.set(for: code)
        let written = try #require(JSONParser.parse(Array(try text("\(config)/recovery.json").utf8)).objectValue)
        let salt = try #require(written["salt"]?.stringValue)
        let fingerprint = try #require(written["fingerprint"]?.stringValue)

        // JSONEncoder without sorted keys: the keys in no particular order.
        try write("\(config)/recovery.json", #"{"fingerprint":"\#(fingerprint)","version":1,"salt":"\#(salt)"}"#)

        #expect(try mark.matches(code))
        #expect(try mark.matches(RecoveryCode.generate()) == false)
    }

    @Test func copiedMarkIsWrittenWithSortedKeys() throws {
        try CopiedMark(folder: config).set(for: RecoveryCode.generate())

        let text = try text("\(config)/recovery.json")
        #expect(text.hasPrefix(#"{"fingerprint":""#) && text.contains(#"","salt":""#) && text.hasSuffix(#"","version":1}"#), "\(text)")
    }

    // MARK: audit.log

    @Test func auditLinesWrittenByJSONEncoderAreRead() throws {
        try write("\(state)/audit.log", #"""
            {"command":"read","origin":"ssh from 10.0.0.1 via /dev/pts/3","reason":"PAM said: Authentication failure\t\u0001é","result":"failed","slot":"wifi","time":"2026-11-29T12:34:56Z"}
            {"command":"lock","origin":"local session","result":"ok","time":"2026-11-29T12:34:57Z"}

            """#)

        #expect(try AuditLog(folder: state).entries(limit: 10) == [
            AuditEntry(time: "2026-11-29T12:34:56Z", command: "read", slot: "wifi", origin: "ssh from 10.0.0.1 via /dev/pts/3",
                       result: "failed", reason: "PAM said: Authentication failure\t\u{1}é"),
            AuditEntry(time: "2026-11-29T12:34:57Z", command: "lock", slot: nil, origin: "local session", result: "ok", reason: nil),
        ])
    }

    @Test func auditLinesAreWrittenAsJSONEncoderWroteThem() throws {
        let log = AuditLog(folder: state)
        try log.append(AuditEntry(time: "2026-11-29T12:34:56Z", command: "read", slot: "wifi",
                                  origin: "ssh from 10.0.0.1 via /dev/pts/3", result: "failed", reason: "PAM said: no\tway"))
        try log.append(AuditEntry(time: "2026-11-29T12:34:57Z", command: "lock", slot: nil, origin: "local session",
                                  result: "ok", reason: nil))

        #expect(try text("\(state)/audit.log") == #"""
            {"command":"read","origin":"ssh from 10.0.0.1 via /dev/pts/3","reason":"PAM said: no\tway","result":"failed","slot":"wifi","time":"2026-11-29T12:34:56Z"}
            {"command":"lock","origin":"local session","result":"ok","time":"2026-11-29T12:34:57Z"}

            """#)
    }

    @Test func auditLinesThatDoNotParseAreSkipped() throws {
        try write("\(state)/audit.log", #"""
            {"command":"read","origin":"o","result":"ok","time":"t1"}
            {"command":"read","origin":"o","result":"ok","time":"t2"
            not json
            {"command":"read","origin":"o","result":"ok"}
            {"command":"read","origin":"o","result":"ok","time":"t3","time":"t4"}
            {"command":"read","origin":"o","result":"ok","time":"t5"} trailing
            {"command":"read","origin":"o","result":"ok","slot":null,"time":"t6"}
            """#)

        #expect(try AuditLog(folder: state).entries(limit: 10).map(\.time) == ["t1", "t6"])
    }
}

private enum Paths {
    static func folder(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }
}
