import Quire

enum EPUBExporter {
    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        throw .notImplemented("EPUB")
    }
}
