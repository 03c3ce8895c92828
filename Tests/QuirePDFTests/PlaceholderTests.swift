import Testing

@Test func placeholderQuirePDFTests() { #expect(Bool(true)) }
