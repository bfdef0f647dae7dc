import TestSupport
import Foundation
import Testing
@testable import Vault

/// `--if-locked CHECK`: run with `/bin/sh -c`; exit 0 means the target still needs the secret.
@Suite struct TargetCheckTests {
    let folder = TemporaryFolder()

    @Test func exitZeroMeansStillLocked() {
        let (locked, status) = TargetCheck(program: "exit 0").stillLocked()
        #expect(locked)
        #expect(status == 0)
    }

    @Test(arguments: [1, 3, 77] as [Int32])
    func anyOtherExitMeansNotLockedAndIsReported(_ code: Int32) {
        let (locked, status) = TargetCheck(program: "exit \(code)").stillLocked()
        #expect(!locked)
        #expect(status == code)
    }

    @Test func theCheckIsAShellCommandLine() {
        let marker = folder.appending("mounted")
        let check = TargetCheck(program: "test ! -e '\(marker)' && true")
        #expect(check.stillLocked().locked)
        #expect(FileManager.default.createFile(atPath: marker, contents: nil))
        #expect(!check.stillLocked().locked)
    }

    @Test func aMissingProgramIsNotLocked() {
        let (locked, status) = TargetCheck(program: "\(folder.path)/no-such-check 2>/dev/null").stillLocked()
        #expect(!locked)
        #expect(status == 127)
    }

    /// The check must not read what was meant for someone else (nor wait for a terminal).
    @Test func theCheckReadsNothingButDevNull() {
        let check = TargetCheck(program: "[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ]")
        #expect(check.stillLocked().locked)
    }
}
