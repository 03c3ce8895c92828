import Testing

@Test func placeholderQuireExportTests() { #expect(Bool(true)) }
