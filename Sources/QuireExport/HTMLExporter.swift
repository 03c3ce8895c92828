import Quire

enum HTMLExporter {
    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        throw .notImplemented("HTML")
    }
}
