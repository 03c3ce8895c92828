// fuzz-header: FileHeader.parse on arbitrary bytes.
//
// A `.qv` test vector (Vectors/files) is read from its vault bytes, after
// its text header (see VectorInput). Any error is fine. A crash is a bug,
// and so is a header that parses but does not encode back to an intact
// copy of itself.

import FuzzSupport
@_spi(Format) import QuireFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = Array(input[VectorInput.prefixCount(input)...])
    guard let (header, damage) = try? FileHeader.parse(bytes) else { return 0 }
    Sink.touch(header.version)
    Sink.touch(header.flags)
    Sink.touch(header.vaultID)
    Sink.touch(damage == .none)
    // What parsed must be what a writer would write.
    let encoded = header.encoded()
    guard let (again, againDamage) = try? FileHeader.parse(encoded), again == header, againDamage == .none else {
        fatalError("FileHeader \(header) parsed from the input does not survive encode/parse")
    }
    if damage == .none && Array(bytes.prefix(FileHeader.byteCount)) != encoded {
        fatalError("an undamaged header parsed to a value that encodes differently")
    }
    return 0
}
