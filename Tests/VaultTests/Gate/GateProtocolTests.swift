#if canImport(Glibc)
import Glibc
#endif
import Testing
import Slots
@testable import GateProtocol
@testable import VaultRules

/// The gate protocol's frames, requests and refusals: strict parsing, and exact round trips.
@Suite struct GateProtocolTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func aHeaderIsAWordASpaceAndALengthWithinTheWordsBound() {
        func header(_ s: String) -> (GateWord, Int)? { Self.bytes(s).withUnsafeBytes { GateFrame.parseHeader($0) } }
        #expect(header("request 11")! == (.request, 11))
        #expect(header("ok 0")! == (.ok, 0))
        #expect(header("ok 65536")! == (.ok, 65536))
        #expect(header("ok 65537") == nil)  // more than a secret
        #expect(header("request 4097") == nil)  // more than a word or message
        #expect(header("request 011") == nil)  // leading zero
        #expect(header("request  11") == nil)
        #expect(header("request 11 ") == nil)
        #expect(header("Request 11") == nil)
        #expect(header("shout 1") == nil)
        #expect(header("request -1") == nil)
        #expect(header("request") == nil)
        #expect(header("request 1234567") == nil)
    }

    @Test func framesAreWrittenAndParsedBackExactly() throws {
        let frames = [GateFrame(.request, text: "1 read mail"), GateFrame(.secret, text: "hunter2\n\0x"), GateFrame(.cancel, text: "")]
        let stream = frames.flatMap { $0.encoded().withUnsafeBytes { Array($0) } }
        #expect(stream == Self.bytes("request 11\n1 read mailsecret 10\nhunter2\n\0xcancel 0\n"))
        let parsed = try #require(stream.withUnsafeBytes { GateFrame.parseAll($0) })
        #expect(parsed.map(\.word) == [.request, .secret, .cancel])
        #expect(parsed.map(\.text) == ["1 read mail", "hunter2\n\0x", ""])
        // Cut short anywhere: not a stream of frames.
        for cut in 1..<stream.count where ![22, 42].contains(cut) {
            #expect(Array(stream[..<cut]).withUnsafeBytes { GateFrame.parseAll($0) } == nil, "cut at \(cut)")
        }
    }

    @Test func everyRequestPrintsAndParsesBackToItself() throws {
        let mail = try #require(SlotName("mail"))
        let requests: [GateRequest] = [.holding(mail), .names, .read(mail), .store(mail), .delete(mail),
                                       .authenticate(.none, reason: "unlock the vault"), .authenticate(.slots([mail]), reason: "read slot 'mail'"),
                                       .authenticate(.everySlot, reason: "move"), .authenticate(.slots([mail, try #require(SlotName("b.c"))]), reason: "x"),
                                       .lock, .unlock, .importValue(mail), .finishImport, .log(1), .log(100000), .log(50, skip: 600), .log(1, skip: 1_000_000), .deviceKey, .recordFailure]
        for r in requests { #expect(GateRequest.parse(r.text) == r, "\(r.text)") }
        #expect(GateRequest.parse("2 read mail") == nil)  // another version
        #expect(GateRequest.parse("1 read") == nil)
        #expect(GateRequest.parse("1 read mail extra") == nil)
        #expect(GateRequest.parse("1 read ../mail") == nil)
        #expect(GateRequest.parse("1 names\n") == nil)
        #expect(GateRequest.parse("1 authenticate - ") == nil)
        #expect(GateRequest.parse("1 log 0") == nil && GateRequest.parse("1 log 100001") == nil && GateRequest.parse("1 log 07") == nil)
        // A skip (the lines an earlier answer gave): 1 to 1,000,000, no zero, sign or leading zero; 0 is no skip.
        #expect(GateRequest.parse("1 log 5 0") == nil && GateRequest.parse("1 log 5 01") == nil && GateRequest.parse("1 log 5 -1") == nil
                && GateRequest.parse("1 log 5 1000001") == nil && GateRequest.parse("1 log 5 1 2") == nil && GateRequest.parse("1 log 5 ") == nil)
        #expect(GateRequest.log(5, skip: 0).text == "1 log 5" && GateRequest.parse("1 log 5 7") == .log(5, skip: 7))
        // A reason's control characters never reach the gate's log or prompt.
        #expect(GateRequest.authenticate(.none, reason: "a\nb\u{1b}[2J").text == "1 authenticate - a b [2J")
        #expect(GateRequest.parse("1 authenticate a,,b x") == nil && GateRequest.parse("1 authenticate ../a x") == nil)
    }

    @Test func thePromptSaysWhichSlotsAnAuthenticationOpens() throws {
        let mail = try #require(SlotName("mail")), bank = try #require(SlotName("bank"))
        #expect(GateScope.slots([mail]).prompt("read slot 'mail'") == "read slot 'mail'")
        #expect(GateScope.slots([mail]).prompt("read slot 'weather'") == "read slot 'weather' (opens slot 'mail')")
        #expect(GateScope.slots([mail]).prompt("unlock the screen saver") == "unlock the screen saver (opens slot 'mail')")
        #expect(GateScope.slots([mail, bank]).prompt("erase the credential git rejected ('mail', 'bank')") == "erase the credential git rejected ('mail', 'bank')")
        #expect(GateScope.slots([mail, bank]).prompt("read slot 'mail'") == "read slot 'mail' (opens slots 'mail', 'bank')")
        #expect(GateScope.slots([bank]).prompt("read slot 'mail' (slot 'bank' stays closed)").hasSuffix("(opens slot 'bank')"))
        #expect(GateScope.everySlot.prompt("move the device slots behind vaultctl-gate") == "move the device slots behind vaultctl-gate (opens every slot)")
        // A mark that joins the quote to what follows (U+034F) does not make a slot look quoted.
        #expect(GateScope.slots([bank]).prompt("read slot '\u{34F}mail'\u{34F} (slot 'bank' stays closed)").hasSuffix("(opens slot 'bank')"))
        // Bidi overrides and zero-width characters never reach a prompt or a log line.
        #expect(GateRequest.authenticate(.slots([bank]), reason: "read \u{202E}'kcab'\u{200D}").text == "1 authenticate bank read  'kcab' ")
    }

    @Test func everyRefusalTheGateSendsDecodesToTheSameError() throws {
        let mail = try #require(SlotName("mail"))
        let errors: [VaultError] = [
            .slot(.empty(mail)), .slot(.badSecretSize(0)), .slot(.foreignMachine(path: "/a")),
            .slot(.wrongSlot(path: "/a", belongsTo: "b")), .slot(.tampered(path: "/a", detail: "d")),
            .slot(.unsafePermissions(path: "/a", detail: "d")), .slot(.serviceUnavailable("x")), .slot(.locked("x")),
            .slot(.promptUnanswered("x")), .slot(.tpmUnavailable(path: "/a", detail: "d")), .slot(.tpmCannotSeal(detail: "d")),
            .slot(.noTPMToSeal(detail: "d")), .slot(.gateHasNoTPM), .slot(.tpmForeign(path: "/a")), .slot(.tpmLockout(seconds: 7)),
            .slot(.tpmLockout(seconds: nil)), .slot(.tpmHelperMissing(path: "/a")), .slot(.gateUnavailable("why")),
            .slot(.fleetNotConfigured(path: "/a/fleet.json")),
            .slot(.io(path: "/a", errno: 5, operation: "read")),
            .authenticationFailed("m"), .notAuthenticated("m"), .accountRefused("m"), .authenticationUnavailable("m"),
            .refused("m"), .badInput("m"), .busy(retryAfter: 1), .lockHeld(path: "/a", holder: nil, seconds: 5),
            .authenticationTimedOut(seconds: 30), .authenticationTimedOut(seconds: nil),
            .configuration(path: "/a", detail: "d"), .blocked(until: 100.5, now: 50.25),
            .authenticationFailedAndBlocked("m", until: 9), .vaultLocked, .auditUnwritable, .changedMeanwhile(mail),
        ]
        for e in errors {
            let text = GateRefusal.encode(e)
            let back = try #require(GateRefusal.decode(text), "\(text.debugDescription)")
            #expect("\(back)" == "\(e)")
        }
        #expect(GateRefusal.decode("slot\u{1F}empty") == nil)
        #expect(GateRefusal.decode("no-such-kind\u{1F}x") == nil)
        // A field cannot carry the separator or a line break into the CLI's one-line message.
        #expect(GateRefusal.encode(.refused("a\u{1F}b\nc")) == "refused\u{1F}a b c")
    }

    @Test func aHoldingAnswerSaysEmptyOrTheBindingAndTag() {
        let h = GateHolding(binding: "machine-id", tag: [0x00, 0xab, 0x10])
        #expect(GateHolding.text(h) == "holds machine-id 00ab10")
        #expect(GateHolding.parse("holds machine-id 00ab10") == .some(h))
        #expect(GateHolding.parse("empty") == .some(nil))
        #expect(GateHolding.parse("holds machine-id 0ab") == nil)
        #expect(GateHolding.parse("holds Machine 00") == nil)
        #expect(GateHolding.parse("full") == nil)
    }

    @Test func theReaderTakesOneFrameAtATimeAndGivesUpAtItsDeadline() throws {
        // Close-on-exec: a child another test starts meanwhile must not keep the write end open.
        let p = try #require(ChildSpawn.pipe())
        let fds = [p.read, p.write]
        defer { close(fds[0]) }
        let stream = Self.bytes("hello 11\n1 protectedok 2\nhirequest 5\n1 na")
        _ = stream.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        let reader = GateFrameReader(fd: fds[0])
        let hello = try reader.next(within: 1).get()
        #expect(hello.word == .hello && hello.text == "1 protected")
        let ok = try reader.next(within: 1).get()
        #expect(ok.word == .ok && ok.text == "hi")
        // The rest of a frame never comes: the deadline ends the wait.
        guard case .failure(.timedOut) = reader.next(within: 0.2) else { Issue.record("no timeout"); return }
        close(fds[1])
        guard case .failure(.endOfInput) = reader.next(within: 1) else { Issue.record("no end"); return }
    }

    /// Every frame a reader (with `readAhead` bytes of buffer) takes from a pipe while a thread writes
    /// `pieces` into it, pausing `pause` microseconds after every `pauseEvery`-th piece, then closes it.
    static func framesRead(_ pieces: [[UInt8]], readAhead: Int = 4096, pause: UInt32, pauseEvery: Int = 1) throws -> [GateFrame] {
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read) }
        let writer = p.write
        let (frames, _) = BackgroundThread.both({ () -> [GateFrame] in
            let reader = GateFrameReader(fd: p.read, readAhead: readAhead)
            var frames: [GateFrame] = []
            while case .success(let frame) = reader.next(within: 10) { frames.append(frame) }
            return frames
        }, {
            defer { close(writer) }
            for (i, piece) in pieces.enumerated() {
                var done = 0
                while done < piece.count {
                    let n = piece.withUnsafeBytes { write(writer, $0.baseAddress! + done, piece.count - done) }
                    if n <= 0 { return }
                    done += n
                }
                if i % pauseEvery == 0 { usleep(pause) }
            }
        })
        return frames
    }

    /// What one read brings beyond a frame waits in the reader for the next call, wherever the writes split
    /// the stream: inside a header, inside a payload, or several frames at once.
    @Test func theReaderKeepsWhatCameAheadWhereverTheStreamIsSplit() throws {
        let stream = Self.bytes("hello 11\n1 protectedanswer 7\nhunter2ok 5\nvaluerefused 3\nabc")
        let expected: [GateWord] = [.hello, .answer, .ok, .refused]
        for cuts in [[1], [4, 9], [10, 25, 26], [30], Array(stride(from: 1, to: stream.count, by: 1)), [stream.count - 1]] {
            let pieces = zip([0] + cuts, cuts + [stream.count]).map { Array(stream[$0..<$1]) }
            let frames = try Self.framesRead(pieces, pause: 200)
            #expect(frames.map(\.word) == expected, "cut at \(cuts)")
            #expect(frames.count == 4 && frames[0].text == "1 protected" && frames[3].text == "abc", "cut at \(cuts)")
            #expect(frames.count == 4 && frames[1].payload.withUnsafeBytes({ Array($0) }) == Array("hunter2".utf8), "cut at \(cuts)")
        }
    }

    /// A read that ends inside the next frame's header leaves that part in the buffer; the next call moves it
    /// to the front and reads the rest behind it (lost, the `ok` below never comes).
    @Test func aHeaderSplitAcrossReadsIsKept() throws {
        let frames = try Self.framesRead([Array("hello 2\nhiok".utf8), Array(" 2\nyo".utf8)], pause: 50_000)
        #expect(frames.map(\.word) == [.hello, .ok] && frames.map(\.text) == ["hi", "yo"], "\(frames.map(\.word))")
    }

    /// Long streams of random frames, written in random pieces (a pause between some), read through buffers
    /// of several sizes: exactly the frames `parseAll` finds in the whole stream, in order.
    @Test(arguments: [GateFrame.maximumHeader + 1, 64, 4096])
    func randomStreamsInRandomPiecesReadAsParseAllParsesThem(readAhead: Int) throws {
        var rng = PolicyFuzzRandom(seed: UInt64(readAhead))
        let words = GateWord.allCases
        for _ in 0..<4 {
            var stream: [UInt8] = []
            while stream.count < 20_000 {
                let word = words[Int(rng.next() % UInt64(words.count))]
                let length = Int(rng.next() % UInt64(min(word.maximumPayload, 300) + 1))
                stream += Array("\(word.rawValue) \(length)\n".utf8) + (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            }
            let expected = try #require(stream.withUnsafeBytes { GateFrame.parseAll($0) })
            var pieces: [[UInt8]] = []
            var at = 0
            while at < stream.count {
                let n = min(stream.count - at, 1 + Int(rng.next() % 5000))
                pieces.append(Array(stream[at..<(at + n)]))
                at += n
            }
            let frames = try Self.framesRead(pieces, readAhead: readAhead, pause: 1_000, pauseEvery: 3)
            #expect(frames.count == expected.count, "read \(frames.count) of \(expected.count) frames")
            let same = zip(frames, expected).allSatisfy { $0.word == $1.word && $0.encoded().constantTimeEquals($1.encoded()) }
            #expect(same, "a frame read differs from parseAll's")
        }
    }

    @Test func theReaderRefusesWhatIsNotAFrame() {
        for junk in ["hello 11 1 protected\n", "GET / HTTP/1.1\r\n", String(repeating: "a", count: 40), "ok 3\nab"] {
            guard let p = ChildSpawn.pipe() else { Issue.record("no pipe"); continue }
            let fds = [p.read, p.write]
            _ = Self.bytes(junk).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
            close(fds[1])
            let result = GateFrameReader(fd: fds[0]).next(within: 1)
            close(fds[0])
            guard case .failure(.malformed) = result else { Issue.record("\(junk.debugDescription): \(result)"); continue }
        }
    }

    @Test func onlyTheWordsThatMayCarryASecretAreReadIntoAZeroizingBuffer() throws {
        let stream = Self.bytes("hello 11\n1 protectedprompt-hidden 9\nPassword:answer 7\nhunter2ok 5\nvaluerefused 3\nabcrequest 6\n1 lock")
        let frames = try #require(stream.withUnsafeBytes { GateFrame.parseAll($0) })
        let secret = frames.map { frame -> Bool in if case .secret = frame.body { return true } else { return false } }
        #expect(frames.map(\.word) == [.hello, .promptHidden, .answer, .ok, .refused, .request])
        #expect(secret == [false, false, true, true, false, false])
        // The same through the reader the CLI and the gate use.
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read) }
        _ = stream.withUnsafeBytes { write(p.write, $0.baseAddress, $0.count) }
        close(p.write)
        let reader = GateFrameReader(fd: p.read)
        var read: [Bool] = []
        while case .success(let frame) = reader.next(within: 1) {
            if case .secret = frame.body { read.append(true) } else { read.append(false) }
        }
        #expect(read == secret)
    }

    @Test func aFrameLargerThanThePipeIsWrittenWholeToANonBlockingDescriptor() throws {
        // A read's largest value and its header, more than a pipe holds (64 KiB): writev's short writes are carried on.
        let p = try #require(ChildSpawn.pipe())
        defer { close(p.read) }
        _ = fcntl(p.write, F_SETFL, fcntl(p.write, F_GETFL) | O_NONBLOCK)
        let value = SecretBytes.random(count: SecretBytes.maximumCount)
        // The writer on a thread of its own (it closes its end when done), the reader here.
        let frame = GateFrame(.ok, value)
        let writer = p.write
        nonisolated(unsafe) let sent = frame
        let (read, written) = BackgroundThread.both({ GateFrameReader(fd: p.read).next(within: 10) }, {
            defer { close(writer) }
            return sent.write(to: writer)
        })
        #expect(written)
        let got = try read.get()
        #expect(got.word == .ok && got.payload.constantTimeEquals(value))
    }
}
