#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Slots

/// `BackgroundThread`: two looks that wait at the same time, and work started to warm something.
@Suite struct BackgroundThreadTests {
    @Test func bothRunsTheTwoAtTheSameTimeAndReturnsBothResults() throws {
        // `here` waits (bounded) for a byte that only `there` writes: run one after the other, it would time out.
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read); close(p.write) }
        let (reader, writer) = (p.read, p.write)
        let (here, there) = BackgroundThread.both({ () -> Bool in
            var fd = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            return poll(&fd, 1, 5000) == 1
        }, { () -> String in
            var byte: UInt8 = 1
            return write(writer, &byte, 1) == 1 ? "written" : "not written"
        })
        #expect(here, "the two did not run at the same time")
        #expect(there == "written")
    }

    @Test func startRunsTheWorkOnAThreadOfItsOwn() throws {
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read); close(p.write) }
        let writer = p.write
        #expect(BackgroundThread.start {
            var byte: UInt8 = 7
            _ = write(writer, &byte, 1)
        })
        var fd = pollfd(fd: p.read, events: Int16(POLLIN), revents: 0)
        #expect(poll(&fd, 1, 5000) == 1)
    }
}
