import Foundation

/// A JSON document a command prints with `--json` (`Spec/cli-json.md §3`):
/// one `Encodable` type per shape. Its ``example`` is encoded by
/// ``JSONOutline`` into the outline `quire help CMD` shows
/// (`{"id", "created", "tags": […]}`), so the help cannot drift from what
/// the command prints.
protocol JSONShape: Encodable {
    /// A value with every optional object present and one element in every
    /// array of objects, so the outline shows their keys.
    static var example: Self { get }
}

/// An optional value encoded as `null` when absent (the spec's rule:
/// absent values are `null`, never missing keys), where synthesized
/// `Encodable` would leave the key out.
// swift-format-ignore: UseSynthesizedInitializer
@propertyWrapper
struct OrNull<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    // Written out: a property wrapper's value initializer must be declared.
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

/// A map whose keys are data (`{"device": 1, "recovery": 1}`), shown in
/// outlines as `{KEY: value}` with the names given here.
struct NamedMap<Value: Encodable>: Encodable {
    let values: [String: Value]
    let keyName: String
    let valueName: String

    func encode(to encoder: any Encoder) throws {
        if encoder.userInfo[JSONOutline.marker] != nil {
            var c = encoder.singleValueContainer()
            try c.encode(OutlineText(text: "{\(keyName): \(valueName)}"))
        } else {
            var c = encoder.singleValueContainer()
            try c.encode(values)
        }
    }
}

/// Text an outline shows as it is.
struct OutlineText: Encodable {
    let text: String
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(text)
    }
}

/// The outline of a JSON shape: its keys in declaration order, nested
/// objects and arrays of objects drawn with their own keys.
enum JSONOutline {
    static let marker = CodingUserInfoKey(rawValue: "quire.outline")!

    /// `{"a", "b": {"c"}, "d": [{"e"}]}` for `value`.
    static func of(_ value: some Encodable) -> String {
        let root = Node()
        let encoder = OutlineEncoder(node: root)
        try? value.encode(to: encoder)
        return root.rendered
    }

    /// The outline of `type`'s example, wrapped to lines of at most `width`.
    static func wrapped(_ type: any JSONShape.Type, width: Int = 72) -> String {
        let text = "JSON: " + of(type.example)
        var lines: [String] = []
        var current = ""
        for piece in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty && current.count + 1 + piece.count > width {
                lines.append(current)
                current = String(piece)
            } else {
                current += (current.isEmpty ? "" : " ") + piece
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.joined(separator: "\n")
    }

    final class Node {
        enum Kind {
            case scalar
            case object
            case array
            case text(String)
        }

        var kind = Kind.scalar
        var keys: [(String, Node)] = []
        var element: Node?

        func child(_ key: String) -> Node {
            kind = .object
            if let found = keys.first(where: { $0.0 == key }) { return found.1 }
            let n = Node()
            keys.append((key, n))
            return n
        }

        var rendered: String {
            switch kind {
            case .scalar: return ""
            case .text(let t): return t
            case .array:
                guard let element, case .object = element.kind else { return "" }
                return "[" + element.rendered + "]"
            case .object:
                let parts = keys.map { key, node -> String in
                    let inner = node.rendered
                    return inner.isEmpty ? "\"\(key)\"" : "\"\(key)\": \(inner)"
                }
                return "{" + parts.joined(separator: ", ") + "}"
            }
        }
    }

    struct OutlineEncoder: Encoder {
        let node: Node
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [JSONOutline.marker: true] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            node.kind = .object
            return KeyedEncodingContainer(Keyed<Key>(node: node))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(node: node) }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey] = []

        mutating func encodeNil(forKey key: Key) throws { _ = node.child(key.stringValue) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try value.encode(to: OutlineEncoder(node: node.child(key.stringValue)))
        }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            let child = node.child(key.stringValue)
            if let value { try value.encode(to: OutlineEncoder(node: child)) }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
            NestedKey
        > {
            let child = node.child(key.stringValue)
            child.kind = .object
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unkeyed(node: node.child(key.stringValue)) }
        mutating func superEncoder() -> any Encoder { OutlineEncoder(node: node) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { OutlineEncoder(node: node.child(key.stringValue)) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] = []
        var count = 0

        init(node: Node) {
            self.node = node
            node.kind = .array
        }

        private mutating func next() -> Node {
            count += 1
            if let e = node.element { return e }
            let e = Node()
            node.element = e
            return e
        }

        mutating func encodeNil() throws { _ = next() }
        mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: OutlineEncoder(node: next())) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let e = next()
            e.kind = .object
            return KeyedEncodingContainer(Keyed<NestedKey>(node: e))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(node: next()) }
        mutating func superEncoder() -> any Encoder { OutlineEncoder(node: next()) }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] = []

        mutating func encodeNil() throws {}
        mutating func encode(_ value: Bool) throws {}
        mutating func encode(_ value: String) throws {}
        mutating func encode(_ value: Double) throws {}
        mutating func encode(_ value: Float) throws {}
        mutating func encode(_ value: Int) throws {}
        mutating func encode(_ value: Int8) throws {}
        mutating func encode(_ value: Int16) throws {}
        mutating func encode(_ value: Int32) throws {}
        mutating func encode(_ value: Int64) throws {}
        mutating func encode(_ value: UInt) throws {}
        mutating func encode(_ value: UInt8) throws {}
        mutating func encode(_ value: UInt16) throws {}
        mutating func encode(_ value: UInt32) throws {}
        mutating func encode(_ value: UInt64) throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {
            if let text = value as? OutlineText {
                node.kind = .text(text.text)
                return
            }
            try value.encode(to: OutlineEncoder(node: node))
        }
    }
}
