#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Slots

/// `BackgroundThread`: two looks that wait at the same time, work started to warm something, and work
/// started now whose result is taken later.
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

    @Test func laterStartsTheWorkAtOnceAndValueWaitsForItsResult() throws {
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read); close(p.write) }
        let writer = p.write
        let later = BackgroundThread.later { () -> String in
            var byte: UInt8 = 9
            _ = write(writer, &byte, 1)
            usleep(100_000)  // still running when value() is asked: it waits
            return "done"
        }
        // Before anyone asks for the value, the work has run (on its own thread).
        var fd = pollfd(fd: p.read, events: Int16(POLLIN), revents: 0)
        #expect(poll(&fd, 1, 5000) == 1, "the work did not start before value() was asked")
        #expect(later.value() == "done")
        #expect(later.value() == "done")  // taken again: the same, and the work did not run again
        var bytes = [UInt8](repeating: 0, count: 8)
        _ = fcntl(p.read, F_SETFL, O_NONBLOCK)
        #expect(read(p.read, &bytes, 8) == 1, "the work ran more than once")
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
