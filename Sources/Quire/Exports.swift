// `import Quire` is all an app needs: the facade's API uses types from the
// crypto, format and key layers (RecoveryKey, EntryBody, SystemRandom…), so
// they are re-exported here.

@_exported public import QuireCrypto
@_exported public import QuireFormat
@_exported public import QuireKeys
@_exported public import QuireSync
