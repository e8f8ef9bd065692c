// The app around Tempo's documentation examples: the names the examples use without declaring
// them (`api`, `store`, `search(_:)`, `draft`, ...). scripts/check-snippets.py compiles this
// file as the module `SnippetStubs` of its scratch package. A Markdown block sees only the names
// its `<!-- snippet-context: ... -->` comment lists; a `///` example sees all of them. See
// CONTRIBUTING.md, "Code examples compile".
//
// Nothing here runs: the bodies only have to type-check. Keep each name's shape the one the
// examples need (sync or async, throwing or not, which actor), so that a wrong call in an
// example still fails to compile.

import Synchronization
import Tempo
import TempoRedis
import TempoTesting

// MARK: Values an example works on

public let query = "swift"
public let text = "swift"
public let id = 42
public let n = 1
public let url = "https://example.com/feed.json"
public let data: [UInt8] = []
public let offset = 0.0
public let draft = Draft()
public let scene = Scene()

public struct Draft: Sendable { public init() {} }
public struct Scene: Sendable {}
public struct User: Sendable {}
public struct Page: Sendable {}
public struct Report: Sendable {}
public struct Feed: Sendable {}
public struct Token: Sendable {}
public struct Parsed: Sendable {}
public struct Row: Sendable { public var id = 1 }
public struct Item: Sendable {}
public struct DecodingError: Error {}

// MARK: Services (callable from any isolation)

public let api = API()
public final class API: Sendable {
    public func user(_ id: Int) async throws -> User { User() }
    public func page(_ number: Int) async throws -> Page { Page() }
    public func download() async throws -> [UInt8] { [] }
    public func download(_ url: String) async throws -> [UInt8] { [] }
    public func fetch() async throws -> [UInt8] { [] }
    public func feed() async throws -> Feed { Feed() }
    public func feed(_ token: Token) async throws -> Feed { Feed() }
    public func slowReport() async throws -> Report { Report() }
    public func title() async throws -> String { "" }
    public func prefetch() async throws {}
    public func save(_ draft: Draft) async throws {}
    public func ping() async throws {}
}

public let auth = Auth()
public final class Auth: Sendable { public func login() async throws -> Token { Token() } }

public let client = Client()
public final class Client: Sendable {
    public func fetch(_ url: String) async throws -> Page { Page() }
}

public let db = Database()
public let database = Database()
public final class Database: Sendable {
    public func fetch() async throws -> [Row] { [] }
    public func allRows() -> [Row] { [] }
}

public let store = Store()
public final class Store: Sendable {
    public func save<Value>(_ value: Value) {}
    public func sync() async throws {}
}

/// The store of ShuttingDown.md's editor, for doc comments that show the same editor.
public final class DraftStore: Sendable {
    public init() {}
    public func save(_ text: String) {}
}

public let index = SearchIndex()
public final class SearchIndex: Sendable {
    @discardableResult public func query(_ text: String) -> [String] { [] }
    public func search(_ text: String) -> [String] { [] }
    public func rebuild() {}
}

public let cache = Cache()
public final class Cache: Sendable {
    public var items: [Item] { [] }
    public func trim() {}
    public func warm() async {}
}

public let mail = Mail()
public final class Mail: Sendable { public func send(_ draft: Draft) async throws {} }

public let order = Order()
public final class Order: Sendable { public func submit() {} }

public let prefetcher = Prefetcher()
public final class Prefetcher: Sendable { public func load(around offset: Double) {} }

public let inbox = Remote()
public let server = Remote()
public let document = Remote()
public let feed = Remote()
public final class Remote: Sendable {
    public func refresh() async throws {}
    public func ping() async throws {}
    public func save() async throws {}
}

public let meter = Meter()
public final class Meter: Sendable { public func sample() async {} }

public let renderer = Renderer()
public final class Renderer: Sendable { public func draw(_ scene: Scene) {} }

public let parser = Parser()
public final class Parser: Sendable {
    public func parse(_ data: [UInt8]) throws -> Parsed { Parsed() }
}

public let metrics = Metrics()
public final class Metrics: Sendable {
    public func record(_ name: String, _ elapsed: Duration) {}
    public func flush() {}
}

public let logger = Logger()
public final class Logger: Sendable { public func debug(_ message: String) {} }

/// `log(error)` and `log.warning("...")`.
public let log = Log()
public struct Log: Sendable {
    public func callAsFunction(_ message: Any) {}
    public func warning(_ message: String) {}
}

public let viewModel = ReloadingModel()
public final class ReloadingModel: Sendable { public func reload() async {} }

/// An actor that collects values, for examples that await it.
public let recorder = Recorder()
public actor Recorder { public func append(_ value: Int) {} }

/// Values collected from any isolation: `results.append("query")`, `ticks.append(clock.now)`.
public let results = Collected()
public let ticks = Collected()
public final class Collected: Sendable {
    public func append<Value>(_ value: Value) {}
}

/// `let queries = Queries()`, `queries.append(text)`, `queries.all`.
public final class Queries: Sendable {
    private let values = Mutex<[String]>([])
    public init() {}
    public func append(_ value: String) { values.withLock { $0.append(value) } }
    public var all: [String] { values.withLock { $0 } }
}

// MARK: Free functions an example calls

public func search(_ text: String) {}
public func save() {}
public func save<Value>(_ value: Value) {}
public func submit() {}
public func prefetch() {}
public func sync() {}
public func sync() async throws {}
public func like() {}
public func render() {}
public func render(_ offset: Double) {}
public func ping() async throws {}
public func fetch() async throws -> Page { Page() }
public func flaky() async throws -> Int { 1 }
public func f() async throws {}
public func work() async throws {}
public func slow() async throws {}
public func startHeartbeat() {}
public func show(_ value: Any) {}
public func showMessage(_ message: String) {}

// MARK: Timing objects an example uses without making

public let clock = ManualClock()
public let registry = TempoRegistry.shared
public let saver = Debouncer(.seconds(1), by: .ownedActor, maxWait: .seconds(10))
public let progress = Throttler(.milliseconds(100), by: .ownedActor, option: .ensureLast)
public let refresher = Throttler(.seconds(5), by: .ownedActor)

// MARK: On the main actor: views and models

@MainActor public let banner = Label()
@MainActor public let statusLabel = Label()
@MainActor public let progressView = Label()

@MainActor public final class Label {
    public var text = ""
    public var isHidden = false
    public init() {}
    public func flash() {}
}

/// The README's search view model, in the shape README.md and BuildingASearchViewModel.md
/// declare it (keep the three alike), for doc-comment examples: `SearchViewModel { query in
/// [query] }`, `await model.queryChanged(text)`, `model.results`. A Markdown document that
/// declares it uses its own declaration, not this one.
@MainActor public final class SearchViewModel {
    public private(set) var results: [String] = []
    public private(set) var failure: String?

    private let searcher = Debouncer(.milliseconds(300))
    private let search: @Sendable (String) async throws -> [String]

    public init(search: @escaping @Sendable (String) async throws -> [String]) {
        self.search = search
    }

    public func queryChanged(_ query: String) async {
        do {
            results = try await searcher.result(latestWins: true) { [search] in
                try await search(query)
            }
            failure = nil
        } catch is DiscardedCall {
            // a newer query took over: its caller publishes
        } catch is CancellationError {
            // the view went away
        } catch {
            failure = "\(error)"
        }
    }
}

@MainActor public let model = Model()
@MainActor public final class Model {
    public var summary = ""
    public func like() {}
    public func search(_ query: String) async throws {}
}

/// `self` in an example that uses it outside a type of its own: a screen on the main actor.
/// The checker makes such an example a method of `Screen`.
@MainActor public final class Screen {
    public let label = Label()
    public let summary = Label()
    public let model = Model()
    public let debouncer = Debouncer(.milliseconds(250))
    public let likeThrottler = Throttler(.seconds(2))
    public func search(_ text: String) {}
}

// MARK: Awaited results (debounceResult, throttleResult, Debouncer.result)

extension API {
    public func search(_ query: String) async throws -> [String] { [] }
}

public let searcher = Debouncer(.milliseconds(300))

// MARK: Shared limits (TempoRedis)

/// `SharedRateLimiter(store: redis, ...)`: the app's Redis client, already conformed to
/// `RedisScripting` (the adapters themselves are in snippet-stubs-redis-clients.swift's modules
/// and in the article on shared limits).
public let redis = AppRedis()
public struct AppRedis: RedisScripting {
    public func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
        -> [Int64]
    { [] }
}

/// The made-up client of `RedisScripting`'s example: a connection whose `evalsha` and `eval`
/// return the reply's integers, and whose error reply carries the server's message.
public struct SomeRedisConnection: Sendable {
    public func evalsha(_ sha1: String, keys: [String], args: [String]) async throws -> [Int64] {
        []
    }
    public func eval(_ script: String, keys: [String], args: [String]) async throws -> [Int64] {
        []
    }
}
public struct SomeRedisError: Error { public let message: String }
