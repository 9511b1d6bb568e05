"""Write bench/corpus/keyword_coverage.jsonl: a fixed corpus of agent questions and answers.

Deterministic (a fixed seed, no downloads): 52 hand-written questions across programming,
machine learning, operations, security, customer support and everyday topics, each with
sentences a helpful agent might answer with. Each question yields four answers in the forms
agents produce: a full paragraph, a brief answer, a markdown answer with bold terms and a
bullet list, and a partly off-topic answer that drifts into another topic; plus a handful of
edge cases (empty output, stopword-only input). One JSON object per line:
``{"id", "kind", "input", "output"}``.

Run: ``python bench/corpus/make_keyword_corpus.py`` (rewrites the file; the benchmark reads it).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("keyword_coverage.jsonl")

# (question, sentences of a good answer)
TOPICS: list[tuple[str, list[str]]] = [
    (
        "JavaScript frameworks like React and Vue",
        [
            "The most popular JavaScript frameworks today are React.js, Vue.js and Angular.",
            "React focuses on components and a virtual DOM, with hooks for state.",
            "Vue offers a gentle learning curve and single-file components.",
            "Both frameworks have large ecosystems, routers and state management libraries.",
            "For a small team, Vue is often quicker to adopt, while React has more jobs.",
        ],
    ),
    (
        "TypeScript offers interfaces, generics, and type inference",
        [
            "TypeScript adds static typing on top of JavaScript.",
            "Interfaces describe the shape of objects and can be extended.",
            "Generic functions and classes stay reusable across many types.",
            "Type inference works out most annotations, so you rarely write types by hand.",
            "The compiler catches mistakes before the code ever runs in a browser.",
        ],
    ),
    (
        "Machine learning models require data preprocessing, feature engineering, and "
        "hyperparameter tuning",
        [
            "A machine learning model is only as good as its data.",
            "Preprocessing cleans missing values, scales numeric columns and encodes categories.",
            "Feature engineering turns raw fields into signals the model can use.",
            "Hyperparameter tuning searches learning rates, depths and regularisation strengths.",
            "Cross-validation keeps the tuning honest by testing on held-out folds.",
        ],
    ),
    (
        "How do Python generators and the yield keyword save memory?",
        [
            "A generator produces values lazily, one at a time, instead of building a list.",
            "Each yield pauses the function and hands a value to the caller.",
            "Because items are never stored together, memory stays flat for huge sequences.",
            "Generator expressions look like list comprehensions with parentheses.",
            "They are ideal for streaming files line by line.",
        ],
    ),
    (
        "Explain Docker containers versus virtual machines",
        [
            "Containers share the host kernel, while virtual machines each run a full guest OS.",
            "That makes Docker containers start in milliseconds and use far less memory.",
            "A virtual machine gives stronger isolation through the hypervisor.",
            "Images are layered, so containers built from the same base share disk space.",
            "Many teams run containers inside VMs to get both benefits.",
        ],
    ),
    (
        "What causes memory leaks in Node.js applications?",
        [
            "Most Node.js memory leaks come from references that are never released.",
            "Global caches without eviction grow forever.",
            "Event listeners added on every request and never removed keep closures alive.",
            "Timers created with setInterval hold on to their callbacks.",
            "Heap snapshots in Chrome DevTools show which objects keep growing.",
        ],
    ),
    (
        "Compare PostgreSQL and MongoDB for transactional workloads",
        [
            "PostgreSQL is a relational database with strict ACID transactions.",
            "MongoDB stores flexible JSON-like documents and added multi-document transactions.",
            "For transactional workloads with joins and constraints, PostgreSQL is safer.",
            "MongoDB shines when the schema changes often and data nests naturally.",
            "Both scale reads with replicas; sharding is built into MongoDB.",
        ],
    ),
    (
        "How does Kubernetes autoscaling work for pods and nodes?",
        [
            "The Horizontal Pod Autoscaler adds or removes pods based on CPU or custom metrics.",
            "The Vertical Pod Autoscaler adjusts resource requests of existing pods.",
            "The Cluster Autoscaler adds nodes when pods cannot be scheduled.",
            "Scaling decisions use the metrics server, so install it first.",
            "Set sensible requests and limits or autoscaling will behave erratically.",
        ],
    ),
    (
        "What is retrieval augmented generation and why use a vector database?",
        [
            "Retrieval augmented generation fetches relevant documents before the model answers.",
            "A vector database stores embeddings and finds the nearest ones to a query.",
            "Grounding answers in retrieved text reduces hallucinations.",
            "Chunk size and embedding model choice strongly affect retrieval quality.",
            "Popular options include pgvector, Qdrant and Weaviate.",
        ],
    ),
    (
        "Best practices for REST API versioning and pagination",
        [
            "Put the version in the URL path, like /v1/, or in an Accept header.",
            "Never break existing clients; add fields instead of renaming them.",
            "Cursor-based pagination is more stable than offset pagination for large tables.",
            "Return a next cursor and a page size limit in every response.",
            "Document deprecations well before removing an API version.",
        ],
    ),
    (
        "How do I prevent SQL injection in a Flask app?",
        [
            "Always use parameterized queries instead of string formatting.",
            "SQLAlchemy binds parameters for you when you use its query API.",
            "Validate and limit user input, but never rely on escaping alone.",
            "Run the database user with the least privileges it needs.",
            "Static analysis tools like Bandit flag dangerous SQL string building.",
        ],
    ),
    (
        "Explain gradient descent and the learning rate",
        [
            "Gradient descent updates the weights in the direction that lowers the loss.",
            "The learning rate sets how big each update step is.",
            "Too high a learning rate makes training diverge; too low makes it crawl.",
            "Stochastic gradient descent estimates the gradient from small batches.",
            "Schedulers decay the learning rate as training converges.",
        ],
    ),
    (
        "What are the benefits of Rust ownership and borrowing?",
        [
            "Ownership gives every value exactly one owner that frees it.",
            "Borrowing lets code read or mutate data without taking ownership.",
            "The borrow checker rules out data races and dangling pointers at compile time.",
            "There is no garbage collector, so performance is predictable.",
            "Lifetimes tell the compiler how long references stay valid.",
        ],
    ),
    (
        "How does HTTPS protect data in transit?",
        [
            "HTTPS wraps HTTP in TLS, which encrypts everything between browser and server.",
            "The server proves its identity with a certificate signed by a trusted authority.",
            "A key exchange creates session keys that only the two parties know.",
            "Message authentication codes detect tampering.",
            "HSTS tells browsers to always use HTTPS for the site.",
        ],
    ),
    (
        "Git rebase versus merge for feature branches",
        [
            "Merging keeps the full history and adds a merge commit.",
            "Rebasing replays your commits on top of the main branch for a linear history.",
            "Never rebase commits that others have already pulled.",
            "Interactive rebase lets you squash and reword commits before a pull request.",
            "Many teams rebase locally and merge through the pull request.",
        ],
    ),
    (
        "What is the difference between unit tests and integration tests?",
        [
            "Unit tests check one function or class in isolation, usually with test doubles.",
            "Integration tests exercise several components together, such as code and a database.",
            "Unit tests run in milliseconds, so you can run thousands on every change.",
            "Integration tests catch wiring mistakes that unit tests miss.",
            "A healthy suite has many unit tests and fewer, broader integration tests.",
        ],
    ),
    (
        "How do transformers use self-attention in natural language processing?",
        [
            "Self-attention lets every token weigh every other token in the sequence.",
            "Queries, keys and values are projections of the token embeddings.",
            "Multi-head attention looks at different relationships in parallel.",
            "Positional encodings give the model a sense of word order.",
            "This architecture powers large language models like GPT-4.",
        ],
    ),
    (
        "Explain CI/CD pipelines with GitHub Actions",
        [
            "Continuous integration builds and tests every push automatically.",
            "GitHub Actions runs workflows defined in YAML files under .github/workflows.",
            "Jobs run on hosted runners or your own self-hosted machines.",
            "Continuous deployment ships the build to production once the checks pass.",
            "Cache dependencies between runs to keep pipelines fast.",
        ],
    ),
    (
        "How should I store user passwords securely?",
        [
            "Never store passwords in plain text or with a fast hash like SHA-256.",
            "Use a slow, salted password hash such as Argon2id or bcrypt.",
            "Each password gets its own random salt, stored beside the hash.",
            "Tune the work factor so hashing takes around a hundred milliseconds.",
            "Add two-factor authentication for sensitive accounts.",
        ],
    ),
    (
        "What are React hooks like useState and useEffect for?",
        [
            "Hooks let function components hold state and run side effects.",
            "useState returns the current value and a setter that triggers a re-render.",
            "useEffect runs after rendering, for subscriptions, timers or data fetching.",
            "Return a cleanup function from useEffect to avoid leaks.",
            "Custom hooks bundle stateful logic for reuse across components.",
        ],
    ),
    (
        "How does Redis caching improve API latency?",
        [
            "Redis keeps hot data in memory, so reads take well under a millisecond.",
            "Caching expensive query results spares the primary database.",
            "Set a TTL on each key so stale entries expire.",
            "Cache invalidation on writes keeps clients from seeing old data.",
            "Use Redis Cluster or replicas when one instance is not enough.",
        ],
    ),
    (
        "Explain overfitting and regularization in neural networks",
        [
            "A network overfits when it memorises the training set instead of generalising.",
            "Validation loss rising while training loss falls is the classic sign.",
            "Dropout randomly disables neurons during training.",
            "L2 regularization penalises large weights.",
            "More data and early stopping are often the most effective fixes.",
        ],
    ),
    (
        "What does the C++ move semantics feature solve?",
        [
            "Move semantics let C++ transfer resources instead of copying them.",
            "An rvalue reference binds to temporaries that are about to be destroyed.",
            "std::move casts an object so its move constructor is chosen.",
            "Containers like std::vector grow much faster when elements can be moved.",
            "After a move, the source object is valid but unspecified.",
        ],
    ),
    (
        "How do I migrate a .NET Framework app to .NET 8?",
        [
            "Start with the .NET Upgrade Assistant to analyse project files and packages.",
            "Convert projects to the SDK style format first.",
            "Replace Windows-only APIs such as System.Web with ASP.NET Core equivalents.",
            "Migrate libraries before the applications that depend on them.",
            "Run the test suite after each step to catch behavioural changes.",
        ],
    ),
    (
        "Why is my Python script slow and how do I profile it?",
        [
            "Profile before optimising; guesses about hot spots are usually wrong.",
            "cProfile shows which functions take the most cumulative time.",
            "py-spy samples a running process without changing its code.",
            "Move heavy loops into NumPy or a compiled extension.",
            "Caching repeated work with functools.lru_cache often helps.",
        ],
    ),
    (
        "Explain OAuth 2.0 authorization code flow with PKCE",
        [
            "The app redirects the user to the authorization server to log in.",
            "The server returns a short-lived authorization code to the redirect URI.",
            "The app exchanges the code for an access token and a refresh token.",
            "PKCE adds a code verifier so a stolen code is useless to attackers.",
            "Public clients such as mobile apps must always use PKCE.",
        ],
    ),
    (
        "How do message queues like Kafka and RabbitMQ differ?",
        [
            "Kafka is a distributed log that keeps messages for replay.",
            "RabbitMQ is a broker that routes messages to queues and deletes them once acked.",
            "Kafka partitions scale throughput across many consumers.",
            "RabbitMQ offers flexible routing with exchanges and bindings.",
            "Choose Kafka for event streaming and RabbitMQ for task queues.",
        ],
    ),
    (
        "What is the CAP theorem in distributed systems?",
        [
            "The CAP theorem says a distributed system cannot guarantee consistency, "
            "availability and partition tolerance all at once.",
            "Network partitions happen, so the real choice is between consistency and "
            "availability.",
            "Systems like ZooKeeper favour consistency.",
            "Systems like Cassandra favour availability with eventual consistency.",
            "PACELC extends CAP with the latency trade-off when there is no partition.",
        ],
    ),
    (
        "Tips for writing effective prompts for large language models",
        [
            "Be specific about the task, the audience and the format you want.",
            "Give one or two examples of good answers, known as few-shot prompting.",
            "Ask the model to think step by step for reasoning tasks.",
            "Put long reference text in clearly delimited sections.",
            "Test prompts against a small evaluation set before shipping.",
        ],
    ),
    (
        "How do I set up logging and monitoring for microservices?",
        [
            "Emit structured JSON logs with a request id on every line.",
            "Use OpenTelemetry to trace requests across services.",
            "Export metrics such as latency, error rate and saturation to Prometheus.",
            "Grafana dashboards and alerts turn those metrics into action.",
            "Centralise logs in Loki or Elasticsearch so you can search them.",
        ],
    ),
    (
        "What are the SOLID principles in object-oriented design?",
        [
            "Single responsibility: a class should have one reason to change.",
            "Open/closed: extend behaviour without modifying existing code.",
            "Liskov substitution: subclasses must work wherever the base class does.",
            "Interface segregation: prefer small, focused interfaces.",
            "Dependency inversion: depend on abstractions, not concrete classes.",
        ],
    ),
    (
        "How can I speed up pandas dataframe operations?",
        [
            "Vectorised column operations are far faster than iterrows loops.",
            "Use categorical dtypes for repeated strings to save memory.",
            "Read only the columns you need from CSV or Parquet files.",
            "Parquet loads much faster than CSV for large datasets.",
            "For data that does not fit in memory, try Polars or DuckDB.",
        ],
    ),
    (
        "Explain the event loop in JavaScript",
        [
            "JavaScript runs on a single thread with an event loop.",
            "The call stack runs synchronous code first.",
            "Callbacks from timers and I/O wait in the task queue.",
            "Promises resolve through the microtask queue, which runs before the next task.",
            "Long synchronous work blocks the loop and freezes the page.",
        ],
    ),
    (
        "How does garbage collection work in Java?",
        [
            "The JVM frees objects that are no longer reachable from any root.",
            "Generational collectors split the heap into young and old generations.",
            "Most objects die young, so minor collections are cheap.",
            "G1 is the default collector and aims for predictable pause times.",
            "ZGC keeps pauses under a millisecond even on huge heaps.",
        ],
    ),
    (
        "What is the difference between supervised and unsupervised learning?",
        [
            "Supervised learning trains on labelled examples to predict a target.",
            "Classification and regression are the classic supervised tasks.",
            "Unsupervised learning finds structure in unlabelled data.",
            "Clustering and dimensionality reduction are common unsupervised methods.",
            "Semi-supervised learning combines a few labels with lots of unlabelled data.",
        ],
    ),
    (
        "How do I return an item I bought online?",
        [
            "Start the return from your order history within 30 days of delivery.",
            "Pick a reason and print the prepaid shipping label.",
            "Pack the item in its original packaging if you still have it.",
            "Drop the parcel at any partner location and keep the receipt.",
            "Your refund reaches the original payment method within five business days.",
        ],
    ),
    (
        "Why was my credit card payment declined?",
        [
            "Payments are often declined because the card has expired or the billing address "
            "does not match.",
            "Your bank may block unusual purchases as suspected fraud.",
            "Check that you have enough available credit for the amount.",
            "Call the number on the back of the card to confirm the purchase.",
            "You can also try another payment method such as PayPal.",
        ],
    ),
    (
        "How can I track my package delivery?",
        [
            "Open the shipping confirmation email and click the tracking number.",
            "The carrier page shows each scan from the warehouse to your door.",
            "Delivery estimates update as the parcel moves between hubs.",
            "If tracking has not changed for three days, contact support.",
            "You can also enable text notifications for delivery updates.",
        ],
    ),
    (
        "What are healthy breakfast options for weight loss?",
        [
            "Greek yogurt with berries gives protein and fibre with few calories.",
            "Oatmeal keeps you full for hours thanks to its soluble fibre.",
            "Eggs are filling and versatile.",
            "Avoid sugary cereals and pastries that spike blood sugar.",
            "Pair breakfast with water or black coffee instead of juice.",
        ],
    ),
    (
        "How do I bake sourdough bread at home?",
        [
            "Feed your starter so it is bubbly and active before mixing.",
            "Mix flour, water, starter and salt, then let the dough rest.",
            "Stretch and fold the dough every half hour during bulk fermentation.",
            "Shape the loaf and proof it overnight in the fridge.",
            "Bake in a preheated Dutch oven, first covered, then uncovered for the crust.",
        ],
    ),
    (
        "What should I pack for a week of hiking in the Alps?",
        [
            "Bring waterproof hiking boots that are already broken in.",
            "Pack layers: a base layer, a fleece and a waterproof shell.",
            "Weather in the Alps changes fast, so carry a warm hat and gloves even in summer.",
            "A first aid kit, sunscreen and a map are essential.",
            "Book mountain huts ahead during July and August.",
        ],
    ),
    (
        "How do index funds compare with actively managed funds?",
        [
            "Index funds track a market index such as the S&P 500.",
            "Their fees are much lower than those of actively managed funds.",
            "Most active managers fail to beat their benchmark after fees over ten years.",
            "Active funds may help in niche markets with less efficient pricing.",
            "For most investors, low-cost index funds are a sensible core holding.",
        ],
    ),
    (
        "What are the symptoms of dehydration?",
        [
            "Early symptoms of dehydration include thirst, dry mouth and dark urine.",
            "Headaches, dizziness and tiredness often follow.",
            "Severe dehydration can cause confusion and a rapid heart rate.",
            "Drink water regularly, especially in heat or during exercise.",
            "Seek medical help if symptoms are severe or do not improve.",
        ],
    ),
    (
        "How do I reset my router and restore the internet connection?",
        [
            "Unplug the router, wait thirty seconds, and plug it back in.",
            "If that fails, hold the reset button for ten seconds to restore factory settings.",
            "Reconnect using the default Wi-Fi name and password on the label.",
            "Log in to the admin page to set a new network password.",
            "Call your provider if the connection light stays red.",
        ],
    ),
    (
        "Explain the difference between TCP and UDP",
        [
            "TCP is connection-oriented and guarantees ordered, reliable delivery.",
            "UDP sends independent datagrams with no delivery guarantee.",
            "TCP retransmits lost packets and controls congestion.",
            "UDP has lower latency, which suits games, voice and video.",
            "QUIC builds reliable streams on top of UDP.",
        ],
    ),
    (
        "What is a Python virtual environment and why use one?",
        [
            "A virtual environment is an isolated folder with its own Python packages.",
            "It keeps project dependencies from clashing with each other.",
            "Create one with python -m venv .venv and activate it.",
            "Pin versions in a requirements file or pyproject.toml.",
            "Tools like uv and Poetry manage environments for you.",
        ],
    ),
    (
        "How do I handle errors in async Rust with Tokio?",
        [
            "Async functions return Result, and the question mark operator propagates errors.",
            "The anyhow crate makes application error handling concise.",
            "thiserror derives error types for libraries.",
            "A panicking Tokio task returns a JoinError when you await its handle.",
            "Use timeouts from tokio::time to stop tasks that hang.",
        ],
    ),
    (
        "What are the main features of C# and the .NET runtime?",
        [
            "C# is a statically typed language with classes, generics and LINQ.",
            "async and await make asynchronous code read like synchronous code.",
            "The .NET runtime compiles to native code just in time and ahead of time.",
            "Garbage collection manages memory automatically.",
            "NuGet is the package manager for .NET libraries.",
        ],
    ),
    (
        "How do GPUs accelerate deep learning training?",
        [
            "GPUs run thousands of cores in parallel, ideal for matrix multiplications.",
            "Deep learning training is dominated by those matrix operations.",
            "CUDA and cuDNN give frameworks like PyTorch fast GPU kernels.",
            "Mixed precision training uses FP16 or BF16 to double throughput.",
            "Large models are split across several GPUs with data or model parallelism.",
        ],
    ),
    (
        "How do I write a good cover letter for a software engineering job?",
        [
            "Address the hiring manager by name if you can find it.",
            "Open with why this company and role interest you.",
            "Highlight one or two projects with measurable results.",
            "Match your skills to the job description's requirements.",
            "Keep it under one page and proofread it twice.",
        ],
    ),
    (
        "Explain feature flags and canary releases",
        [
            "Feature flags turn functionality on or off without a new deployment.",
            "They let teams merge unfinished work safely behind a flag.",
            "A canary release sends a small share of traffic to the new version first.",
            "Metrics from the canary decide whether to roll out further or roll back.",
            "Remove old flags regularly to avoid technical debt.",
        ],
    ),
    (
        "What is zero trust security?",
        [
            "Zero trust assumes no user or device is trusted by default, even inside the network.",
            "Every request is authenticated, authorised and encrypted.",
            "Access is granted with least privilege and checked continuously.",
            "Micro-segmentation limits how far an attacker can move.",
            "Strong identity and device posture checks replace the old VPN perimeter.",
        ],
    ),
]

FILLER_OPENERS = [
    "Great question!",
    "Sure, here's an overview.",
    "Happy to help with that.",
    "Here is a short summary.",
    "Good question, let me explain.",
]
FILLER_CLOSERS = [
    "Let me know if you want more detail.",
    "I hope this helps!",
    "Feel free to ask a follow-up question.",
    "Want me to go deeper on any of these points?",
]

EDGE_CASES = [
    ("edge-empty-output", "How do Python decorators work?", ""),
    ("edge-empty-input", "", "Decorators wrap a function to add behaviour."),
    ("edge-both-empty", "", ""),
    ("edge-stopwords-only", "What is it?", "It is what it is."),
    ("edge-numbers-only", "What is 17 * 23?", "391"),
    ("edge-stopwords-vs-content", "Why?", "Because caching avoids repeated database queries."),
    (
        "edge-tech-terms",
        "Compare C++, C# and Node.js for GPT-4 tooling",
        "For GPT-4 tools, NodeJS is the quickest start; C# is fine too, and C++ is fastest.",
    ),
    (
        "edge-compound-split",
        "How does hyperparameter tuning work?",
        "You tune the hyperparameters by trying values and keeping the best on validation.",
    ),
]


def _markdown(sentences: list[str], rng: random.Random) -> str:
    lines = [sentences[0], ""]
    for sentence in sentences[1:]:
        words = sentence.rstrip(".").split()
        if len(words) > 3:
            at = rng.randrange(0, len(words) - 1)
            words[at] = f"**{words[at]}**"
        lines.append("- " + " ".join(words))
    return "\n".join(lines)


def build() -> list[dict[str, str]]:
    rng = random.Random(20261130)
    rows: list[dict[str, str]] = []
    for index, (question, sentences) in enumerate(TOPICS):
        other = TOPICS[(index + 7) % len(TOPICS)][1]
        opener, closer = rng.choice(FILLER_OPENERS), rng.choice(FILLER_CLOSERS)
        answers = {
            "full": " ".join([opener, *sentences, closer]),
            "brief": " ".join(sentences[:2]),
            "markdown": _markdown(sentences, rng),
            "drift": " ".join([*rng.sample(sentences, 2), *rng.sample(other, 2)]),
        }
        for kind, output in answers.items():
            rows.append(
                {"id": f"t{index:02d}-{kind}", "kind": kind, "input": question, "output": output}
            )
    for case_id, question, output in EDGE_CASES:
        rows.append({"id": case_id, "kind": "edge", "input": question, "output": output})
    return rows


def main() -> None:
    rows = build()
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} pairs to {OUT}")


if __name__ == "__main__":
    main()
