import Testing
@testable import VaultRules

@Suite struct IPAddressTests {
    // MARK: Spellings that parse

    @Test(arguments: [
        ("0.0.0.0", "0.0.0.0"), ("192.168.1.20", "192.168.1.20"), ("255.255.255.255", "255.255.255.255"),
        ("::", "::"), ("::1", "::1"), ("[::1]", "::1"), ("fe80::1%eth0", "fe80::1"), ("[fe80::1%2]", "fe80::1"),
        ("FD7A:115C:A1E0::1", "fd7a:115c:a1e0::1"), ("fd7a:115c:a1e0:0:0:0:0:1", "fd7a:115c:a1e0::1"),
        ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"), ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
        ("::ffff:100.64.3.4", "100.64.3.4"), ("::FFFF:192.168.1.20", "192.168.1.20"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"), ("::1.2.3.4", "::102:304"),
    ])
    func validSpellingParses(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))

        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test func ipv4AndItsMappedSpellingAreEqual() {
        #expect(IPAddress("100.64.3.4") == IPAddress("::ffff:100.64.3.4"))
        #expect(IPAddress("100.64.3.4")!.isV4)
        #expect(!IPAddress("::1.2.3.4")!.isV4)
    }

    // MARK: Spellings that do not

    @Test(arguments: [
        "", " ", "x1.2.3.4", " 1.2.3.4", "1.2.3.4 ", "+1.2.3.4", "1.2.3.4.", ".1.2.3.4", "1.2.3", "1.2.3.4.5",
        "256.1.1.1", "1.2.3.256", "01.2.3.4", "1.2.3.004", "1..3.4", "1.2.3.-4", "0x1.2.3.4", "١.٢.٣.٤", "1.2.3.4%eth0",
        "1::2::3", "::1::", ":::", "1:::2", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7", ":1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:", "12345::", "g::1", "+1::", "-0::", "1:2:3:4:5:6:7:1.2.3.4",
        "::1.2.3.4:5", "1.2.3.4::", "::1.2.3", "::256.1.1.1", "fe80::1%", "fe80::1%eth 0", "fe80::1%a%b", "[::1", "::1]",
        "host.example", "localhost", ":0", "::ffff:1.2.3.4.5", "1.2.3.4\u{0}", "1.2.3.4\u{0}5", "::1\u{0}:2",
    ])
    func invalidSpellingIsRejected(text: String) {
        #expect(IPAddress(text) == nil)
    }

    // MARK: Ranges

    @Test func tailscaleV4RangeEdges() {
        let range = IPRange("100.64.0.0/10")!

        #expect(range.contains(IPAddress("100.64.0.0")!))
        #expect(range.contains(IPAddress("100.127.255.255")!))
        #expect(range.contains(IPAddress("::ffff:100.100.100.100")!))
        #expect(!range.contains(IPAddress("100.63.255.255")!))
        #expect(!range.contains(IPAddress("100.128.0.0")!))
        #expect(!range.contains(IPAddress("::100.64.0.1")!))  // IPv4-compatible, not mapped
        #expect(!range.contains(IPAddress("6440::1")!))
    }

    @Test func tailscaleV6RangeEdges() {
        let range = IPRange("fd7a:115c:a1e0::/48")!

        #expect(range.contains(IPAddress("fd7a:115c:a1e0::")!))
        #expect(range.contains(IPAddress("fd7a:115c:a1e0:ffff:ffff:ffff:ffff:ffff")!))
        #expect(!range.contains(IPAddress("fd7a:115c:a1df:ffff:ffff:ffff:ffff:ffff")!))
        #expect(!range.contains(IPAddress("fd7a:115c:a1e1::")!))
        #expect(!range.contains(IPAddress("100.64.0.1")!))
    }

    @Test func prefixesThatAreNotWholeBytes() {
        #expect(IPRange("172.16.0.0/12")!.contains(IPAddress("172.31.255.255")!))
        #expect(!IPRange("172.16.0.0/12")!.contains(IPAddress("172.32.0.0")!))
        #expect(IPRange("fc00::/7")!.contains(IPAddress("fdff::1")!))
        #expect(!IPRange("fc00::/7")!.contains(IPAddress("fe00::1")!))
        #expect(IPRange("fe80::/10")!.contains(IPAddress("febf::1")!))
        #expect(!IPRange("fe80::/10")!.contains(IPAddress("fec0::1")!))
    }

    @Test func wholeAndEmptyPrefixes() {
        #expect(IPRange("::1/128")!.contains(IPAddress("::1")!))
        #expect(!IPRange("::1/128")!.contains(IPAddress("::2")!))
        #expect(IPRange("127.0.0.1/32")!.contains(IPAddress("127.0.0.1")!))
        #expect(IPRange("0.0.0.0/0")!.contains(IPAddress("8.8.8.8")!))
        #expect(!IPRange("0.0.0.0/0")!.contains(IPAddress("2001:db8::1")!))  // every IPv4 address, nothing else
        #expect(IPRange("::/0")!.contains(IPAddress("8.8.8.8")!))
    }

    @Test func hostBitsInTheNetworkAreIgnored() {
        #expect(IPRange("100.64.1.2/10")!.contains(IPAddress("100.100.0.1")!))
    }

    @Test(arguments: ["100.64.0.0", "100.64.0.0/", "100.64.0.0/33", "::/129", "100.64.0.0/-1", "100.64.0.0/+8",
                      "100.64.0.0/10/1", "/10", "host/8", "fe80::%eth0/10", "[::1]/128", "100.64.0.0/ 10", "100.64.0.0/0010"])
    func invalidRangeIsRejected(text: String) {
        #expect(IPRange(text) == nil)
    }

    @Test func rangeDescriptionIsItsText() {
        #expect(IPRange("fd7a:115c:a1e0::/48")!.description == "fd7a:115c:a1e0::/48")
    }
}
