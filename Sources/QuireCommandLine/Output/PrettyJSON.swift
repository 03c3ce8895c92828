/// A JSON document that writes itself, byte for byte as ``Output/encode(_:)``
/// (JSONEncoder: pretty, sorted keys, slashes unescaped) encodes it. The
/// documents with one object per entry (`list --json`, `search --json`)
/// write themselves: the encoder's generic containers cost more than
/// reading the entries did. Keys must be written in sorted order.
protocol PrettyJSONWritable: Encodable {
    /// Writes the value as its `Encodable` conformance encodes it.
    func write(to json: inout PrettyJSON)
}

/// Pretty JSON as JSONEncoder writes it: two spaces per level, `"key" : value`,
/// an empty array as `[`, an empty line and `]`; strings with `"`, `\`
/// and controls escaped (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u001b`),
/// everything else (slashes, non-ASCII) as it is.
struct PrettyJSON {
    private(set) var bytes: [UInt8] = []
    /// For each open container, whether nothing was written in it yet.
    private var empty: [Bool] = []

    /// `value` written by ``PrettyJSONWritable/write(to:)``.
    static func encode(_ value: some PrettyJSONWritable) -> [UInt8] {
        var json = PrettyJSON()
        value.write(to: &json)
        return json.bytes
    }

    /// An object: `body` writes its members with ``key(_:)`` and a value each.
    mutating func object(_ body: (inout PrettyJSON) -> Void) {
        container(open: 0x7b, close: 0x7d, body)
    }

    /// An array of `items`, each written by `element`.
    mutating func array<S: Sequence>(_ items: S, _ element: (inout PrettyJSON, S.Element) -> Void) {
        container(open: 0x5b, close: 0x5d) { json in
            for item in items {
                json.startElement()
                element(&json, item)
            }
        }
    }

    /// The key of the next member of an object.
    mutating func key(_ name: String) {
        startElement()
        string(name)
        bytes.append(contentsOf: [0x20, 0x3a, 0x20])
    }

    mutating func string(_ s: String) {
        bytes.append(0x22)
        for b in s.utf8 {
            switch b {
            case 0x22: bytes.append(contentsOf: [0x5c, 0x22])
            case 0x5c: bytes.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: bytes.append(contentsOf: [0x5c, 0x6e])
            case 0x0d: bytes.append(contentsOf: [0x5c, 0x72])
            case 0x09: bytes.append(contentsOf: [0x5c, 0x74])
            case 0x08: bytes.append(contentsOf: [0x5c, 0x62])
            case 0x0c: bytes.append(contentsOf: [0x5c, 0x66])
            case 0x00..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5c, 0x75, 0x30, 0x30, digits[Int(b >> 4)], digits[Int(b & 15)]])
            default: bytes.append(b)
            }
        }
        bytes.append(0x22)
    }

    mutating func number(_ n: some BinaryInteger) { bytes.append(contentsOf: String(n).utf8) }

    mutating func bool(_ b: Bool) { bytes.append(contentsOf: (b ? "true" : "false").utf8) }

    mutating func null() { bytes.append(contentsOf: "null".utf8) }

    /// `n`, or `null` when nil (``OrNull``).
    mutating func number(orNull n: (some BinaryInteger)?) {
        if let n { number(n) } else { null() }
    }

    /// An array of strings.
    mutating func strings(_ items: [String]) { array(items) { $0.string($1) } }

    private mutating func container(open: UInt8, close: UInt8, _ body: (inout PrettyJSON) -> Void) {
        bytes.append(open)
        empty.append(true)
        body(&self)
        let wasEmpty = empty.removeLast()
        bytes.append(0x0a)
        if wasEmpty { bytes.append(0x0a) }
        indent()
        bytes.append(close)
    }

    private mutating func startElement() {
        if empty[empty.count - 1] {
            empty[empty.count - 1] = false
        } else {
            bytes.append(0x2c)
        }
        bytes.append(0x0a)
        indent()
    }

    private mutating func indent() {
        bytes.append(contentsOf: repeatElement(0x20, count: 2 * empty.count))
    }
}
