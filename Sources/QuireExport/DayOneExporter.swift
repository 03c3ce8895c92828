import Quire

enum DayOneExporter {
    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        throw .notImplemented("DayOne")
    }
}
