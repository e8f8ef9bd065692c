// Stand-ins for the two Redis clients the article on shared limits (Docs/Tempo.docc/
// SharedLimitsAdapters.md) writes an adapter for, so that an adapter compiles exactly as a user writes it
// with the real packages (`import Valkey`, `import RediStack`, `import NIOCore`), without fetching
// them. scripts/check-snippets.py makes each `// snippet-module: Name` section below a module of
// its scratch package, built with the `// snippet-setting:` lines of its section (the settings
// that shape the real module's API) and depending on the other sections it imports; every example
// module may import them. Nothing here runs: bodies are `fatalError()`.
//
// Only what an adapter touches is declared, and each declaration is the real one reduced to its
// signature: the same names, labels, generic shape, `async`, `throws` (typed where the package
// types it), `Sendable` or not, and availability. A wrong label, a missing `try`, a non-Sendable
// value sent where the real API refuses it fail here as they would against the package. When a
// client changes its API, read its sources again and change the section to match, then the
// article's adapter.
//
// Read from:
//   valkey-swift  1.4.0  (e93f72554e0961e056243dae0b204d5c7d843f49)  Sources/Valkey
//   RediStack     1.6.3  (8c4ce10883e405cdbde52855f97f1ec9468c889b)  Sources/RediStack
//   swift-nio     2.101.3 (0b18836bd8b0162e7e17a995a3fbee20ed8f3b2b) Sources/NIOCore

// snippet-module: NIOCore
// swift-nio 2.101.3, Swift 6 language mode (the package's default).

/// ByteBuffer-core.swift: a struct, `Hashable`, `@unchecked Sendable`.
public struct ByteBuffer: Hashable {}
extension ByteBuffer: @unchecked Sendable {}

/// EventLoop.swift: `public protocol EventLoopGroup: AnyObject, _NIOPreconcurrencySendable`
/// (`_NIOPreconcurrencySendable` is `Sendable` on Swift 5.7 and later).
public protocol EventLoopGroup: AnyObject, Sendable {}
public protocol EventLoop: EventLoopGroup {}

/// EventLoopFuture.swift: a final class generic over an unconstrained `Value`, made
/// `@unchecked Sendable` by an extension.
public final class EventLoopFuture<Value> {
    @inlinable
    @preconcurrency
    public func flatMapThrowing<NewValue>(
        _ callback: @escaping @Sendable (Value) throws -> NewValue
    ) -> EventLoopFuture<NewValue> { fatalError() }
}

extension EventLoopFuture: @unchecked Sendable {}

/// AsyncAwaitSupport.swift: `get()` exists only where `Value` is `Sendable`.
extension EventLoopFuture {
    @available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
    @preconcurrency
    @inlinable
    public func get() async throws -> Value where Value: Sendable { fatalError() }
}

// snippet-module: RediStack
// RediStack 1.6.3: the package builds in the Swift 5 language mode, and none of the types below
// is `Sendable` (RESPValue, RedisClient, RedisConnection, RedisConnectionPool). It has no
// scripting commands and no async API: EVALSHA and EVAL go through `send(command:with:)`, whose
// future `get()` (NIOCore) awaits.
// snippet-setting: .swiftLanguageMode(.v5)

import NIOCore

import protocol Foundation.LocalizedError

/// RESP/RESPValue.swift
public enum RESPValue {
    case null
    case simpleString(ByteBuffer)
    case bulkString(ByteBuffer?)
    case error(RedisError)
    case integer(Int)
    case array([RESPValue])

    @inlinable
    public init<Value: RESPValueConvertible>(from value: Value) { fatalError() }
}

extension RESPValue {
    public var array: [RESPValue]? { fatalError() }
    public var int: Int? { fatalError() }
    public var error: RedisError? { fatalError() }
    public var string: String? { fatalError() }
}

extension RESPValue: Equatable {
    public static func == (lhs: RESPValue, rhs: RESPValue) -> Bool { fatalError() }
}

extension RESPValue: RESPValueConvertible {
    public init?(fromRESP value: RESPValue) { fatalError() }
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

/// RESP/RESPValueConvertible.swift
public protocol RESPValueConvertible {
    init?(fromRESP value: RESPValue)
    func convertedToRESPValue() -> RESPValue
}

extension String: RESPValueConvertible {
    public init?(fromRESP value: RESPValue) { fatalError() }
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

extension FixedWidthInteger {
    public init?(fromRESP value: RESPValue) { fatalError() }
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

extension Int: RESPValueConvertible {}
extension Int8: RESPValueConvertible {}
extension Int16: RESPValueConvertible {}
extension Int32: RESPValueConvertible {}
extension Int64: RESPValueConvertible {}
extension UInt: RESPValueConvertible {}
extension UInt8: RESPValueConvertible {}
extension UInt16: RESPValueConvertible {}
extension UInt32: RESPValueConvertible {}
extension UInt64: RESPValueConvertible {}

extension Collection where Element: RESPValueConvertible {
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

/// Converts each element, dropping those that do not convert (`compactMap`); `nil` when the
/// value is not an array.
extension Array: RESPValueConvertible where Element: RESPValueConvertible {
    public init?(fromRESP value: RESPValue) { fatalError() }
}

extension Optional: RESPValueConvertible where Wrapped: RESPValueConvertible {
    public init?(fromRESP value: RESPValue) { fatalError() }
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

/// RedisError.swift: an error reply. `message` is the server's text after `(Redis) `, such as
/// `(Redis) NOSCRIPT No matching script. Please use EVAL.`; the command's future fails with it.
public struct RedisError: LocalizedError {
    public let message: String
    public var errorDescription: String? { fatalError() }
    public init(reason: String) { fatalError() }
}

extension RedisError: Equatable, Hashable {}

extension RedisError: RESPValueConvertible {
    public init?(fromRESP value: RESPValue) { fatalError() }
    public func convertedToRESPValue() -> RESPValue { fatalError() }
}

/// RedisClient.swift
public struct RedisClientError: LocalizedError, Equatable, Hashable {
    public static var connectionClosed: RedisClientError { fatalError() }
    public static func failedRESPConversion(to type: Any.Type) -> RedisClientError {
        fatalError()
    }
    public static func assertionFailure(message: String) -> RedisClientError { fatalError() }
    public var errorDescription: String? { fatalError() }
}

/// RedisClient.swift: not `Sendable`; the subscription requirements are left out.
public protocol RedisClient {
    var eventLoop: EventLoop { get }
    func send(command: String, with arguments: [RESPValue]) -> EventLoopFuture<RESPValue>
}

extension RedisClient {
    public func send(command: String) -> EventLoopFuture<RESPValue> { fatalError() }
}

/// RedisConnection.swift: `public final class RedisConnection: RedisClient, ...`.
public final class RedisConnection: RedisClient {
    public var eventLoop: EventLoop { fatalError() }
    public func send(command: String, with arguments: [RESPValue]) -> EventLoopFuture<RESPValue> {
        fatalError()
    }
}

/// ConnectionPool/RedisConnectionPool.swift: not `Sendable`, though its documentation says it
/// is "entirely thread-safe" (every call is dispatched to its event loop).
public final class RedisConnectionPool {}

extension RedisConnectionPool: RedisClient {
    public var eventLoop: EventLoop { fatalError() }
    public func send(command: String, with arguments: [RESPValue]) -> EventLoopFuture<RESPValue> {
        fatalError()
    }
}

// snippet-module: Valkey
// valkey-swift 1.4.0: Swift 6 language mode; these settings of its Package.swift shape its API
// (the availability of `valkeySwift 1.0`, and async functions that run on the caller's actor).
// snippet-setting: .enableExperimentalFeature("AvailabilityMacro=valkeySwift 1.0:macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0")
// snippet-setting: .enableUpcomingFeature("NonisolatedNonsendingByDefault")

import NIOCore

/// ValkeyClientError.swift: not declared `Sendable` (an `Error` is). A server's error reply is
/// `.commandError` with the reply's text as `message` (`NOSCRIPT No matching script. ...`).
public struct ValkeyClientError: Error, CustomStringConvertible {
    public struct ErrorCode: Equatable, Sendable, CustomStringConvertible {
        public static var connectionClosing: Self { fatalError() }
        public static var connectionClosed: Self { fatalError() }
        public static var commandError: Self { fatalError() }
        public static var cancelled: Self { fatalError() }
        public static var timeout: Self { fatalError() }
        public static var clientIsShutDown: Self { fatalError() }
        public static var respDecodeError: Self { fatalError() }
        public static var clusterError: Self { fatalError() }
        public static var unrecognisedError: Self { fatalError() }
        public var description: String { fatalError() }
    }

    public let errorCode: ErrorCode
    public let message: String?
    public let underlyingError: (any Error)?
    public let file: StaticString
    public let line: UInt

    public init(
        _ errorCode: ErrorCode, message: String? = nil, error: (any Error)? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) { fatalError() }

    public var description: String { fatalError() }
}

/// RESP/RESPToken.swift
public struct RESPToken: Hashable, Sendable {}

/// RESP/RESPDecodeError.swift
public struct RESPDecodeError: Error, Equatable {
    public let message: String?
}

/// RESP/RESPTokenDecodable.swift
public protocol RESPTokenDecodable {
    init(_ token: RESPToken) throws(RESPDecodeError)
}

extension RESPToken: RESPTokenDecodable {
    @inlinable
    public func decode<Value: RESPTokenDecodable>(
        as type: Value.Type = Value.self
    ) throws(RESPDecodeError) -> Value { fatalError() }

    @inlinable
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }
}

extension String: RESPTokenDecodable {
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }
}

extension Int64: RESPTokenDecodable {
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }
}

extension Int: RESPTokenDecodable {
    @inlinable
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }
}

/// An array reply decodes element by element; a reply that is not an array decodes as one
/// element.
extension Array: RESPTokenDecodable where Element: RESPTokenDecodable {
    @inlinable
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }

    @inlinable
    public init(_ token: RESPToken, decodeSingleElementAsArray: Bool) throws(RESPDecodeError) {
        fatalError()
    }
}

/// RESP/RESPStringRenderable.swift (its `encode(into:)` requirement left out).
public protocol RESPStringRenderable: Sendable, Hashable {}
extension String: RESPStringRenderable {}
extension Substring: RESPStringRenderable {}
extension ByteBuffer: RESPStringRenderable {}

/// RESP/RESPBulkString.swift
public struct RESPBulkString: Sendable, Equatable, Hashable {}

/// ValkeyKey.swift
public struct ValkeyKey: Sendable, Equatable, Hashable {
    @inlinable
    public init(_ string: String) { fatalError() }

    @inlinable
    public init(_ buffer: ByteBuffer) { fatalError() }
}

extension ValkeyKey: RESPTokenDecodable {
    @inlinable
    public init(_ token: RESPToken) throws(RESPDecodeError) { fatalError() }
}

extension ValkeyKey: RESPStringRenderable {}

extension ValkeyKey: ExpressibleByStringLiteral {
    @inlinable
    public init(stringLiteral string: String) { fatalError() }
}

extension ValkeyKey {
    @inlinable
    public init(_ bulkString: RESPBulkString) { fatalError() }
}

/// ValkeyCommand.swift (its other requirements left out).
public protocol ValkeyCommand: Sendable, Hashable {
    associatedtype Response: RESPTokenDecodable & Sendable = RESPToken
    static var name: String { get }
}

/// Subscriptions/ValkeySubscription.swift
public struct ValkeySubscriptionMessage: Sendable, Equatable {}

public struct ValkeySubscription: AsyncSequence, Sendable {
    public typealias Element = ValkeySubscriptionMessage
    public typealias Failure = ValkeyClientError

    public struct AsyncIterator: AsyncIteratorProtocol {
        public mutating func next() async throws(ValkeyClientError) -> ValkeySubscriptionMessage? {
            fatalError()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { fatalError() }
}

/// ValkeyClientProtocol.swift: what `ValkeyClient`, `ValkeyClusterClient` and
/// `ValkeyConnection` conform to (its pipelining and subscription requirements left out).
@available(valkeySwift 1.0, *)
public protocol ValkeyClientProtocol: Sendable {
    associatedtype Subscription: AsyncSequence<ValkeySubscriptionMessage, ValkeyClientError>
    func execute<Command: ValkeyCommand>(
        _ command: Command
    ) async throws(ValkeyClientError) -> Command.Response
}

/// Commands/ScriptingCommands.swift: the generated EVAL and EVALSHA, on every client.
@available(valkeySwift 1.0, *)
extension ValkeyClientProtocol {
    @inlinable
    @discardableResult
    public func eval<Script: RESPStringRenderable>(
        script: Script,
        keys: [ValkeyKey] = [],
        args: [String] = []
    ) async throws(ValkeyClientError) -> RESPToken { fatalError() }

    @inlinable
    @discardableResult
    public func evalsha<Sha1: RESPStringRenderable>(
        sha1: Sha1,
        keys: [ValkeyKey] = [],
        args: [String] = []
    ) async throws(ValkeyClientError) -> RESPToken { fatalError() }
}

/// ValkeyClient.swift: one server, a pool of connections.
@available(valkeySwift 1.0, *)
public final class ValkeyClient: Sendable {}

@available(valkeySwift 1.0, *)
extension ValkeyClient: ValkeyClientProtocol {
    public typealias Subscription = ValkeySubscription
    public func execute<Command: ValkeyCommand>(
        _ command: Command
    ) async throws(ValkeyClientError) -> Command.Response { fatalError() }
}

/// Cluster/ValkeyClusterClient.swift: routes each command by the hash slot of its keys.
@available(valkeySwift 1.0, *)
public final class ValkeyClusterClient: Sendable {}

@available(valkeySwift 1.0, *)
extension ValkeyClusterClient: ValkeyClientProtocol {
    public typealias Subscription = ValkeySubscription
    public func execute<Command: ValkeyCommand>(
        _ command: Command
    ) async throws(ValkeyClientError) -> Command.Response { fatalError() }
}

/// Connection/ValkeyConnection.swift: one connection.
@available(valkeySwift 1.0, *)
public final actor ValkeyConnection: ValkeyClientProtocol, Sendable {
    public typealias Subscription = ValkeySubscription
    public func execute<Command: ValkeyCommand>(
        _ command: Command
    ) async throws(ValkeyClientError) -> Command.Response { fatalError() }
}
