import Testing

@Test func placeholderQuireImportTests() { #expect(Bool(true)) }
