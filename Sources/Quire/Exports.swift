// `import Quire` is all an app needs: the facade's API uses types from the
// crypto, format and key layers (RecoveryKey, EntryBody, SystemRandom…), so
// they are re-exported here. What only the package's own tools use is
// `package` or @_spi(Format) / @_spi(Crypto) in those modules, so it is not
// part of what `import Quire` shows (`make api-surface` counts that); the
// CLI, vectors, benchmarks, fuzzers and tests import it with
// `@_spi(Format) @_spi(Crypto) import Quire`.

@_exported public import QuireCrypto
@_exported public import QuireFormat
@_exported public import QuireKeys
@_exported public import QuireSync
