"""Evidence extraction from pasted text (issue 30, item 2), on real samples and adversarial input.

The samples under fixtures/evidence/ are real pastes from public issues and files (each names its
source), one per file, plus three synthesised junk texts. Each sample's table row below is what
`extract_evidence` must read from it, exactly: its traces (language and frame count), the innermost
project frame of each (a suffix of its path, line, function), the error names, the failing tests
(framework, name) and the path mentions outside frames, and whether `looks_like_issue` says it is an
issue. Focused tests then check each format's details; property tests feed random and adversarial
text up to 8 KB and check the guarantees (never raises, consistent output, no pathological time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from woods.retrieval.evidence import (
    MAX_TEXT_CHARS,
    Evidence,
    extract_evidence,
    looks_like_issue,
    message_fragments,
    path_suffixes,
    weighted_terms,
)
from woods.retrieval.evidence_paths import is_library_location, normalize_path

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "evidence"


def sample(name: str) -> str:
    """A sample's body: what follows its `---` line, decoded as pasted bytes would be (invalid
    UTF-8 kept as lone surrogates)."""
    text = (SAMPLES / f"{name}.sample").read_bytes().decode("utf-8", errors="surrogateescape")
    return text.split("\n---\n", 1)[1]


def evidence(name: str) -> Evidence:
    return extract_evidence(sample(name))


@dataclass(frozen=True)
class Expected:
    issue: bool
    traces: list[tuple[str, int]]
    innermost: list[tuple[str, int | None, str] | None]
    errors: list[str]
    tests: list[tuple[str, str]]
    paths: list[tuple[str, int | None]]


def summary(text: str) -> Expected:
    found = extract_evidence(text)

    def tail(frame) -> str:  # the frame's two-segment repository suffix (or its only one)
        suffixes = frame.path_suffixes()
        return suffixes[-2] if len(suffixes) >= 2 else (suffixes[0] if suffixes else "")

    return Expected(
        issue=looks_like_issue(text),
        traces=[(t.language, len(t.frames)) for t in found.traces],
        innermost=[(tail(f), f.line, f.function) if (f := t.innermost_project_frame) else None for t in found.traces],
        errors=sorted({e.name for e in found.errors}),
        tests=[(t.framework, t.name) for t in found.tests],
        paths=[(p.path, p.line) for p in found.paths],
    )


EXPECTED = {
    'cargotest-below-8232': Expected(
        issue=True,
        traces=[('rust', 1)],
        innermost=[('src/test.rs', 1056, '')],
        errors=[],
        tests=[('cargo', 'test::test_dump_queue_content')],
        paths=[],
    ),
    'cargotest-enarx-952': Expected(
        issue=True,
        traces=[('rust', 1), ('rust', 1)],
        innermost=[('tests/integration_tests.rs', 128, ''), ('tests/integration_tests.rs', 128, '')],
        errors=[],
        tests=[('cargo', 'bind'), ('cargo', 'clock_gettime'), ('cargo', 'close'), ('cargo', 'unix_echo')],
        paths=[],
    ),
    'cargotest-rust-42541': Expected(
        issue=True,
        traces=[('rust', 1)],
        innermost=[('src/foo.rs', 12, '')],
        errors=[],
        tests=[('cargo', 'test_hello')],
        paths=[('/cargo/registry/src/github.com-1ecc6299db9ec823/hamcrest-0.1.1/src/core.rs', 31)],
    ),
    'csharp-aspnetcore-2770': Expected(
        issue=True,
        traces=[('csharp', 9)],
        innermost=[('Middleware/SafeCrawlingMiddleware.cs', 25, 'EquineExchange.Homepage.Middleware.SafeCrawlingMiddleware.<Invoke>d__3.MoveNext')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'csharp-identity-868': Expected(
        issue=True,
        traces=[('csharp', 10)],
        innermost=[('Middleware/AntiForgeryMiddleware.cs', 44, 'Yangaroo.Awards.Admin.Web.Infrastructure.Middleware.AntiForgeryMiddleware.<Invoke>d__3.MoveNext')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'csharp-runtime-34021': Expected(
        issue=True,
        traces=[('csharp', 6), ('csharp', 4)],
        innermost=[('', None, 'VTS.Shared.Api.Middleware.Exceptions.ExceptionMiddleware.InvokeAsync'), None],
        errors=['System.InvalidProgramException'],
        tests=[],
        paths=[],
    ),
    'go-digitalrain-5': Expected(
        issue=True,
        traces=[('go', 2)],
        innermost=[('js/js.go', 32, 'github.com/gopherjs/gopherjs/js.(*Object).Get')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'go-gaper-9': Expected(
        issue=True,
        traces=[('go', 3)],
        innermost=[('runner.go', 159, 'github.com/maxcnunes/gaper.(*runner).runBin.func1')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'go-grmon-8': Expected(
        issue=True,
        traces=[('go', 4)],
        innermost=[('parse.go', 76, 'main.ReadRoutines')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'go-intro-to-go-1': Expected(
        issue=True,
        traces=[('go', 1), ('go', 2)],
        innermost=[('intro-to-go/12.go', 25, 'main.main'), ('intro-to-go/12.go', 36, 'main.chanSender')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'go-njump-65': Expected(
        issue=True,
        traces=[('go', 1)],
        innermost=[('app/main.go', 69, 'main.main')],
        errors=[],
        tests=[],
        paths=[('main.go', 69)],
    ),
    'gotest-dat-14': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['Error'],
        tests=[('go', 'TestInsertRecordsToSql'), ('go', 'TestInsertWhitelist'), ('go', 'TestUpdateBlacklist')],
        paths=[('insert_test.go', 63), ('insert_test.go', 74), ('update_test.go', 90)],
    ),
    'gotest-gophercises-5': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['Error'],
        tests=[('go', 'Test_gitInspector_t2')],
        paths=[('inspector_test.go', 12)],
    ),
    'gotest-inspeqtor-120': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['Error'],
        tests=[('go', 'TestRestart')],
        paths=[('actions_test.go', 37)],
    ),
    'gotest-tidb-42557': Expected(
        issue=True,
        traces=[('go', 3)],
        innermost=[('terror/terror_test.go', 88, 'github.com/pingcap/tidb/parser/terror.call')],
        errors=['Error'],
        tests=[('go', 'TestTraceAndLocation')],
        paths=[('terror_test.go', 164), ('/Users/zhangxiaoyu/GolandProjects/tidb/parser/terror/terror_test.go', 164)],
    ),
    'java-ck-10': Expected(
        issue=True,
        traces=[('java', 4)],
        innermost=[('ck/FileUtils.java', 23, 'com.github.mauricioaniche.ck.FileUtils.getAllDirs')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'java-spring-rejected': Expected(
        issue=True,
        traces=[('java', 8), ('java', 4)],
        innermost=[('event/NewLeaderConfiguredEventPublisher.java', 19, 'pl.piomin.services.customer.event.NewLeaderConfiguredEventPublisher.publish'), None],
        errors=['java.util.concurrent.RejectedExecutionException'],
        tests=[],
        paths=[],
    ),
    'java-swagger-codegen-npe': Expected(
        issue=True,
        traces=[('java', 5)],
        innermost=[('html/StaticHtmlCodegen.java', 180, 'io.swagger.codegen.v3.generators.html.StaticHtmlCodegen.preprocessOpenAPI')],
        errors=[],
        tests=[],
        paths=[('../../swagger-test/swagger/pet-shop.json', None)],
    ),
    'java-thread-exception-note': Expected(
        issue=True,
        traces=[('java', 2)],
        innermost=[('ThreadExceptionTest.java', 8, 'ThreadExceptionTest.lambda$new$0')],
        errors=['java.lang.RuntimeException'],
        tests=[],
        paths=[],
    ),
    'jest-an-issue-47': Expected(
        issue=True,
        traces=[('javascript', 1), ('javascript', 1)],
        innermost=[('tests/example-test.test.js', 4, 'Object.<anonymous>'), ('tests/example-test.test.js', 12, 'Object.<anonymous>')],
        errors=[],
        tests=[('jest', 'example tests › test that always fails'), ('jest', 'example tests › test that always fails too')],
        paths=[],
    ),
    'jest-ci-reporter-1': Expected(
        issue=True,
        traces=[('typescript', 7)],
        innermost=[('src/index.test.ts', 2, 'Object.<anonymous>.test')],
        errors=['Error'],
        tests=[],
        paths=[],
    ),
    'jest-thorium-1697': Expected(
        issue=True,
        traces=[('javascript', 4)],
        innermost=[('scripts/jest_preprocessor.js', 25, 'Object.process')],
        errors=['TypeError'],
        tests=[('jest', 'test/lpfConverter.test.ts'), ('jest', 'test/utils/iso8601.test.ts')],
        paths=[('jest.config.js', None), ('test/lpfConverter.test.ts', None), ('test/utils/iso8601.test.ts', None)],
    ),
    'js-browser-hacktimer-4': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['TypeError'],
        tests=[],
        paths=[('HackTimer.min.js', 1)],
    ),
    'js-browser-photon-11': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['TypeError'],
        tests=[],
        paths=[('photon.min.js', 9)],
    ),
    'js-browser-stacktracejs-121': Expected(
        issue=True,
        traces=[('javascript', 7)],
        innermost=[('vendor.js', 36788, 'Object.printStackTrace.implementation.createException')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'js-can-compile-15': Expected(
        issue=True,
        traces=[('javascript', 5)],
        innermost=[None],
        errors=['TypeError'],
        tests=[],
        paths=[('test.ejs', None)],
    ),
    'js-nextjs-redux-549': Expected(
        issue=True,
        traces=[('javascript', 17)],
        innermost=[('client.js', 1, 'console.error')],
        errors=[],
        tests=[],
        paths=[('client.js', 1)],
    ),
    'js-pug-loader-22': Expected(
        issue=True,
        traces=[('javascript', 3)],
        innermost=[None],
        errors=['TypeError'],
        tests=[],
        paths=[('src/views/pages/index.pug', None), ('node_modules/@webdiscus/pug-loader/src/index.js', None)],
    ),
    'js-rawon-127': Expected(
        issue=True,
        traces=[('javascript', 1), ('javascript', 9)],
        innermost=[('utils/Logger.js', 14, ''), ('utils/Logger.js', 14, 'formatDateForLogFile')],
        errors=['TypeError'],
        tests=[],
        paths=[('/app/start.js', 30)],
    ),
    'js-raxjs-miniapp-319': Expected(
        issue=True,
        traces=[('javascript', 11)],
        innermost=[('web-framework/index.js', 99, 'Object.<anonymous>')],
        errors=['TypeError'],
        tests=[],
        paths=[],
    ),
    'js-toolhive-2366': Expected(
        issue=True,
        traces=[('typescript', 13)],
        innermost=[('switch.tsx', 11, 'Switch')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'junit-gradle-android-55': Expected(
        issue=True,
        traces=[('java', 2), ('java', 1)],
        innermost=[('AndroidLogDetectorTest.java', 43, ''), None],
        errors=['junit.framework.AssertionFailedError'],
        tests=[('junit', 'com.example.lint.detectors.AndroidLogDetectorTest.test_detector_triggering'), ('junit', 'com.example.lint.detectors.AndroidLogDetectorTest.test_detector_not_triggering')],
        paths=[('build/reports/tests/test/index.html', None)],
    ),
    'junit-gradle-exercism-915': Expected(
        issue=True,
        traces=[('java', 1)],
        innermost=[('GreeterTest.java', 9, '')],
        errors=[],
        tests=[('junit', 'GreeterTest.testThatGreeterReturnsTheCorrectGreeting')],
        paths=[('/home/dan/exercism/java/hello-world/build/reports/tests/test/index.html', None)],
    ),
    'junit-smali-537': Expected(
        issue=True,
        traces=[('java', 1), ('java', 1), ('java', 6)],
        innermost=[('SmalideaMethodTest.java', 373, ''), ('SmalideaMethodTest.java', 373, ''), ('dexlib/SmalideaMethodTest.java', 373, 'org.jf.smalidea.dexlib.SmalideaMethodTest.checkSwitchElement')],
        errors=['java.lang.AssertionError', 'java.lang.RuntimeException'],
        tests=[('junit', 'org.jf.smalidea.dexlib.SmalideaMethodTest.testPackedSwitch'), ('junit', 'org.jf.smalidea.dexlib.SmalideaMethodTest.testSparseSwitch')],
        paths=[],
    ),
    'junit-sphinx4-95': Expected(
        issue=True,
        traces=[('java', 10)],
        innermost=[('result/LatticeCompTest.java', 83, 'edu.cmu.sphinx.result.LatticeCompTest.testLatticeComp')],
        errors=['java.lang.AssertionError'],
        tests=[('junit', 'edu.cmu.sphinx.result.LatticeCompTest.testLatticeComp')],
        paths=[],
    ),
    'junit-surefire-jmxfetch-508': Expected(
        issue=True,
        traces=[('java', 4)],
        innermost=[('util/MetricsAssert.java', 54, 'org.datadog.jmxfetch.util.MetricsAssert.assertMetric')],
        errors=['java.lang.AssertionError'],
        tests=[('junit', 'org.datadog.jmxfetch.TestApp.testTelemetryTags')],
        paths=[],
    ),
    'junk-binary': Expected(
        issue=False,
        traces=[],
        innermost=[],
        errors=[],
        tests=[],
        paths=[],
    ),
    'junk-huge': Expected(  # 60 copies of one trace: the first MAX_TRACES (50) are kept
        issue=True,
        traces=[('python', 1)] * 50,
        innermost=[('modes/searchmode.py', 304, 'update_search')] * 50,
        errors=['ValueError'],
        tests=[],
        paths=[],
    ),
    'junk-mixed': Expected(
        issue=True,
        traces=[('python', 1)],
        innermost=[('modes/searchmode.py', 304, 'update_search')],
        errors=['ValueError'],
        tests=[],
        paths=[],
    ),
    'kotlin-coroutines-864': Expected(
        issue=True,
        traces=[('kotlin', 4)],
        innermost=[('Test.kt', 31, 'TestScope$doTheCrash$$inlined$inlineLaunch$1$lambda$1.invokeSuspend')],
        errors=['java.lang.IllegalStateException'],
        tests=[],
        paths=[],
    ),
    'kotlin-datadog-4718': Expected(
        issue=True,
        traces=[('kotlin', 4)],
        innermost=[None],
        errors=['IllegalStateException', 'java.lang.IllegalStateException'],
        tests=[],
        paths=[],
    ),
    'kotlin-vultisig-3204': Expected(
        issue=True,
        traces=[('kotlin', 11)],
        innermost=[('keysign/KeysignViewModel.kt', 145, 'com.vultisig.wallet.ui.models.keysign.KeysignViewModel.startKeysignDkls')],
        errors=['java.lang.IllegalStateException'],
        tests=[],
        paths=[],
    ),
    'markdown-cra-typescript-38': Expected(
        issue=True,
        traces=[('javascript', 2)],
        innermost=[None],
        errors=[],
        tests=[('jest', 'tests/all.test.js')],
        paths=[('tests/all.test.js', None)],
    ),
    'markdown-easybuild-819': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=[],
        tests=[],
        paths=[('config.cfg', None), ('tools/config.py', None)],
    ),
    'markdown-felt-13': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=[],
        tests=[],
        paths=[('felt.config.js', None)],
    ),
    'markdown-jest-12965': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=[],
        tests=[],
        paths=[],
    ),
    'markdown-test-runner-76': Expected(
        issue=False,
        traces=[],
        innermost=[],
        errors=[],
        tests=[],
        paths=[],
    ),
    'mocha-1710': Expected(
        issue=True,
        traces=[('javascript', 14)],
        innermost=[('test/excercise1Tests.js', 12, 'Suite.<anonymous>')],
        errors=['AssertionError', 'assert.AssertionError'],
        tests=[],
        paths=[],
    ),
    'mocha-ci-reporter-8': Expected(
        issue=True,
        traces=[('javascript', 1)],
        innermost=[('mocha/getTestReport.test.js', 21, 'Context.it')],
        errors=['AssertionError'],
        tests=[],
        paths=[],
    ),
    'mocha-testing-node-3': Expected(
        issue=True,
        traces=[('javascript', 1)],
        innermost=[('controllers/auth.controller.spec.js', 7, 'Context.<anonymous>')],
        errors=['AssertionError'],
        tests=[('mocha', 'AuthController isAuthorized Should return false if not authorized')],
        paths=[],
    ),
    'nunit-3230': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=[],
        tests=[('nunit', 'NUnit.Framework.Assertions.AssertMultipleTests.AssertMultipleFails')],
        paths=[],
    ),
    'nunit-5098': Expected(
        issue=True,
        traces=[('csharp', 2)],
        innermost=[('UnitTest1.cs', 35, 'nunitdemo.Tests.Failing2')],
        errors=['Microsoft.Testing.Extensions.VSTestBridge.ObjectModel.VSTestException'],
        tests=[('dotnet', 'Failing2'), ('dotnet', 'Failing1')],
        paths=[],
    ),
    'nunit-nbi-602': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['NBi.NUnit.Runtime.CustomStackTraceAssertionException'],
        tests=[],
        paths=[],
    ),
    'php-cockpitql-20': Expected(
        issue=True,
        traces=[('php', 3)],
        innermost=[('WWW/api.php', 10, '')],
        errors=['Error'],
        tests=[],
        paths=[],
    ),
    'php-ilios-1564': Expected(
        issue=True,
        traces=[('php', 1)],
        innermost=[('Entity/Session.php', 407, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'php-opensb-351': Expected(
        issue=True,
        traces=[('php', 4)],
        innermost=[('OpenSB/Authentication.php', 103, 'OpenSB\\Utilities::notifyBanner')],
        errors=['Error'],
        tests=[],
        paths=[('/var/www/squarebracket/private/class/OpenSB/Utilities.php', None)],
    ),
    'php-shc-framework-171': Expected(
        issue=True,
        traces=[('php', 8)],
        innermost=[('switchables/assignmentpage.class.php', 106, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'php-supla-scripts-19': Expected(
        issue=True,
        traces=[('php', 1)],
        innermost=[('commands/DispatchThermostatCommand.php', 49, '')],
        errors=['Error'],
        tests=[],
        paths=[],
    ),
    'phpunit-2134': Expected(
        issue=True,
        traces=[('php', 1)],
        innermost=[('Test.php', 13, '')],
        errors=[],
        tests=[('phpunit', 'Test::testTwo')],
        paths=[],
    ),
    'phpunit-5627': Expected(
        issue=True,
        traces=[('php', 1)],
        innermost=[('Test.php', 13, '')],
        errors=[],
        tests=[('phpunit', 'Test::testTwo')],
        paths=[('tests/Test.php', None)],
    ),
    'phpunit-phpt-2454': Expected(
        issue=True,
        traces=[('php', 10)],
        innermost=[('Framework/Constraint.php', 115, '')],
        errors=[],
        tests=[('phpunit', '/usr/local/src/phpunit/tests/TextUI/log-junit.phpt')],
        paths=[],
    ),
    'pytest-elasticsearch-loader-56': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['AssertionError'],
        tests=[('', 'test_lol')],
        paths=[('test/test_mock.py', 0), ('app/test/test_mock.py', 2)],
    ),
    'pytest-failure-demo-40': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['AssertionError'],
        tests=[('pytest', 'failure_demo.py::test_generative[3-6]'), ('pytest', 'failure_demo.py::TestFailing::test_simple'), ('pytest', 'failure_demo.py::TestFailing::test_simple_multiline'), ('pytest', 'failure_demo.py::TestFailing::test_not'), ('pytest', 'failure_demo.py::TestSpecialisedExplanations::test_eq_text'), ('pytest', 'failure_demo.py::TestSpecialisedExplanations::test_eq_similar_text'), ('pytest', 'failure_demo.py::TestSpecialisedExplanations::test_eq_multiline_text'), ('pytest', 'failure_demo.py::TestSpecialisedExplanations::test_eq_long_text')],
        paths=[('failure_demo.py', 281)],
    ),
    'pytest-pillow-7546': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['AssertionError'],
        tests=[('pytest', 'test_a'), ('pytest', 'test_b')],
        paths=[('1.py', 5), ('1.py', 9)],
    ),
    'python-package-monitor-3': Expected(
        issue=True,
        traces=[('python', 3)],
        innermost=[None],
        errors=['KeyError'],
        tests=[],
        paths=[('/package_monitor/views.py', None)],
    ),
    'python-relate-18': Expected(
        issue=True,
        traces=[('python', 1), ('python', 2)],
        innermost=[('course/views.py', 767, 'grant_exception_stage_3'), ('course/utils.py', 434, 'wrapper')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'python-tbomb-18': Expected(
        issue=True,
        traces=[('python', 7)],
        innermost=[None],
        errors=['ValueError'],
        tests=[],
        paths=[],
    ),
    'python-the-tale-1562': Expected(
        issue=True,
        traces=[('python', 5)],
        innermost=[None],
        errors=['KeyError'],
        tests=[],
        paths=[],
    ),
    'python-virtaal-685': Expected(
        issue=True,
        traces=[('python', 1)],
        innermost=[('modes/searchmode.py', 304, 'update_search')],
        errors=['ValueError'],
        tests=[],
        paths=[],
    ),
    'rspec-given-18': Expected(
        issue=True,
        traces=[('ruby', 5)],
        innermost=[('rspec/framework.rb', 24, 'fail_with')],
        errors=[],
        tests=[('rspec', "Failing Messages with an oddly formatted then     Then { ios.out =~ /Failure\\/Error: Then \\{ result == \\['a',$/m }")],
        paths=[('/Users/jordan/projects/rspec-given/examples/integration/failing_messages_spec.rb', 55)],
    ),
    'rspec-rack-rpc-18': Expected(
        issue=True,
        traces=[('ruby', 3)],
        innermost=[('spec/spec_helper.rb', 7, 'sample_app')],
        errors=['NoMethodError'],
        tests=[('rspec', 'Rack::RPC::Endpoint handles requests to /rpc by default')],
        paths=[],
    ),
    'rspec-rails-1919': Expected(
        issue=True,
        traces=[('ruby', 1)],
        innermost=[('models/user_spec.rb', 24, '')],
        errors=['NoMethodError'],
        tests=[('rspec', 'User orders by last name')],
        paths=[],
    ),
    'rspec-rust-rspec-1': Expected(
        issue=True,
        traces=[('ruby', 1)],
        innermost=[('test.rb', 5, '')],
        errors=[],
        tests=[('rspec', 'plop plip should equal 32')],
        paths=[('test.rb', 5)],
    ),
    'rspec-todos-api-30': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['NoMethodError'],
        tests=[('rspec', 'Todos API POST /todos when the request is valid creates a todo')],
        paths=[('spec/requests/todos_spec.rb', 60)],
    ),
    'ruby-aeonvera-382': Expected(
        issue=True,
        traces=[('ruby', 8)],
        innermost=[('api/errors_controller.rb', 34, 'backtrace_as_array')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'ruby-eefgilm-54': Expected(
        issue=True,
        traces=[('ruby', 7)],
        innermost=[None],
        errors=['NoMethodError'],
        tests=[],
        paths=[],
    ),
    'ruby-plutonium-generator': Expected(
        issue=True,
        traces=[('ruby', 7)],
        innermost=[None],
        errors=['LoadError'],
        tests=[],
        paths=[('app/models/admin.rb', None)],
    ),
    'ruby-rubygems-org-2174': Expected(
        issue=True,
        traces=[('ruby', 3)],
        innermost=[('controllers/dependencies_controller.rb', 10, 'show')],
        errors=['NoMethodError'],
        tests=[],
        paths=[],
    ),
    'ruby-rubygems-org-653': Expected(
        issue=True,
        traces=[('ruby', 2)],
        innermost=[('models/dependency.rb', 62, 'name')],
        errors=['ActionView::Template::Error'],
        tests=[],
        paths=[],
    ),
    'ruby-trema-blog': Expected(
        issue=True,
        traces=[('ruby', 8)],
        innermost=[('bin/trema', 7, '')],
        errors=['NoMethodError'],
        tests=[],
        paths=[('lib/hello_trema.rb', None), ('trema.conf', None)],
    ),
    'ruby-truffleruby-4075': Expected(
        issue=True,
        traces=[('ruby', 2)],
        innermost=[('core/integer.rb', 157, 'Integer#times')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-diss-16': Expected(
        issue=True,
        traces=[('rust', 14)],
        innermost=[None],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-hyperon-1001': Expected(
        issue=True,
        traces=[('rust', 6)],
        innermost=[('src/main.rs', 161, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-miri-364': Expected(
        issue=True,
        traces=[('rust', 8)],
        innermost=[('', None, 'compiletest_rs::runtest::TestCx::compare_output::{{closure}}')],
        errors=[],
        tests=[],
        paths=[('/Users/bjorn/.cargo/registry/src/github.com-1ecc6299db9ec823/compiletest_rs-0.3.8/src/runtest.r', None)],
    ),
    'rust-orogene-1': Expected(
        issue=True,
        traces=[('rust', 13)],
        innermost=[('src/main.rs', 75, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-red-oxide-10': Expected(
        issue=True,
        traces=[('rust', 3)],
        innermost=[('src/main.rs', 177, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-rust-58554': Expected(
        issue=True,
        traces=[('rust', 4)],
        innermost=[('src/main.rs', 2, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'rust-uwd2-12': Expected(
        issue=True,
        traces=[('rust', 1)],
        innermost=[('src/explorer_modinfo.rs', 45, '')],
        errors=[],
        tests=[],
        paths=[],
    ),
    'unittest-pyndri-33': Expected(
        issue=True,
        traces=[('python', 1), ('python', 1)],
        innermost=[('tests/pyndri_tests.py', 121, 'setUp'), ('tests/pyndri_tests.py', 121, 'setUp')],
        errors=['AssertionError'],
        tests=[('unittest', '__main__.IndriTest.test_1empty'), ('unittest', '__main__.IndriTest.test_document')],
        paths=[],
    ),
    'unittest-ranger-tools-14': Expected(
        issue=True,
        traces=[('python', 3)],
        innermost=[('test/test_buffer.py', 7, '<module>')],
        errors=['ImportError', 'ModuleNotFoundError'],
        tests=[('unittest', 'test_buffer')],
        paths=[],
    ),
    'unittest-reinvent-8': Expected(
        issue=True,
        traces=[('python', 1)],
        innermost=[('inception_tests/test_add.py', 50, 'test_inception_model_1')],
        errors=['AssertionError'],
        tests=[('unittest', 'unittest_reinvent.inception_tests.test_add.Test_inception_model_add.test_inception_model_1')],
        paths=[],
    ),
    'unittest-xian-105': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=['AssertionError'],
        tests=[('', 'test_tracer_works_roughly'), ('', 'tests/unit/test_runtime.py::TestRuntime::test_tracer_works_roughly')],
        paths=[],
    ),
    'xunit-exercism-563': Expected(
        issue=True,
        traces=[],
        innermost=[],
        errors=[],
        tests=[('dotnet', 'ClockTest.Clocks_with_negative_minute')],
        paths=[('exercises/clock/ClockTest.cs', 323)],
    ),
    'xunit-roslyn-43790': Expected(
        issue=True,
        traces=[('csharp', 5)],
        innermost=[None],
        errors=[],
        tests=[],
        paths=[],
    ),
}

# Sample files by kind (file-name prefix): the brief asks for at least three real samples of each.
KINDS = {
    "python traceback": ("python-",), "java/kotlin": ("java-", "kotlin-"), "javascript/typescript": ("js-",),
    "browser": ("js-browser-", "js-nextjs-", "js-toolhive-"), "ruby": ("ruby-",), "go panic": ("go-",),
    "rust panic": ("rust-",), "c#": ("csharp-",), "php": ("php-",), "pytest": ("pytest-",), "unittest": ("unittest-",),
    "junit": ("junit-",), "go test": ("gotest-",), "cargo test": ("cargotest-",), "rspec": ("rspec-",),
    "jest": ("jest-",), "mocha": ("mocha-",), "phpunit": ("phpunit-",), "xunit/nunit": ("xunit-", "nunit-"),
    "markdown issue": ("markdown-",), "junk": ("junk-",),
}
ALL_SAMPLES = sorted(p.stem for p in SAMPLES.glob("*.sample"))


def test_every_kind_has_at_least_three_samples_each_with_its_source():
    for kind, prefixes in KINDS.items():
        assert sum(name.startswith(prefixes) for name in ALL_SAMPLES) >= 3, kind
    for name in ALL_SAMPLES:
        header = (SAMPLES / f"{name}.sample").read_bytes().split(b"\n---\n", 1)[0].decode()
        assert header.startswith("source: "), name
        if not name.startswith("junk-"):
            assert "https://github.com/" in header or "find_string id" in header, name
    assert set(EXPECTED) == set(ALL_SAMPLES)


@pytest.mark.parametrize("name", ALL_SAMPLES)
def test_sample_reads_exactly_as_expected(name):
    assert summary(sample(name)) == EXPECTED[name]


# -- frames, per runtime -------------------------------------------------------------------------------


def test_python_frames_innermost_last_with_functions_lines_and_offsets():
    text = sample("python-relate-18")
    trace = evidence("python-relate-18").traces[1]  # Django's old debug page: line number under the file
    assert not trace.innermost_first
    assert [(f.line, f.function, f.project) for f in trace.frames] == [(132, "get_response", False), (434, "wrapper", True)]
    assert trace.innermost_project == 1 and trace.innermost_frame is trace.frames[1]
    frame = trace.frames[0]
    assert text[frame.offset:].startswith('File "d:\\Python27')
    tb = evidence("python-tbomb-18").traces[0]  # exec'd code: `<string>` is no project file
    assert tb.error == "ValueError" and tb.innermost_project is None and not any(f.project for f in tb.frames)


def test_jvm_frames_carry_packages_into_repository_paths_and_cause_chains_split_traces():
    ck = evidence("java-ck-10").traces[0]
    assert ck.error == "java.lang.NullPointerException"  # glued to its first frame (`…Exceptionat com.…`)
    assert ck.frames[0].path_suffixes()[0] == "com/github/mauricioaniche/ck/FileUtils.java"
    spring = evidence("java-spring-rejected")
    assert [t.error for t in spring.traces] == ["", "java.util.concurrent.RejectedExecutionException"]
    assert spring.traces[0].frames[-1].function == "java.base/java.lang.Thread.run" and not spring.traces[0].frames[-1].project
    vultisig = evidence("kotlin-vultisig-3204").traces[0]  # Play console: a space before the parenthesis
    assert vultisig.innermost_first and vultisig.innermost_project == 0 and vultisig.innermost_frame is vultisig.frames[0]
    assert [f.language for f in vultisig.frames[:6]] == ["kotlin"] * 5 + ["java"]
    assert [f.project for f in vultisig.frames] == [True] * 3 + [False] * 8


def test_javascript_frames_node_browser_and_source_maps():
    rax = evidence("js-raxjs-miniapp-319").traces[0]
    assert rax.frames[0].line == 472 and rax.frames[0].column is None  # Node's throw site, before the trace
    assert (rax.frames[1].function, rax.frames[1].line, rax.frames[1].column) == ("getReplacer", 472, 27)
    assert rax.frames[-1].path == "node:internal/modules/cjs/loader" and not rax.frames[-1].project
    firefox = evidence("js-browser-stacktracejs-121").traces[0]
    assert firefox.frames[0].function == "Object.printStackTrace.implementation.createException"
    assert (firefox.frames[0].path, firefox.frames[0].line, firefox.frames[0].column) == ("http://localhost:8080/vendor.js", 36788, 22)
    chrome = evidence("js-toolhive-2366").traces[0]  # `fn @ file:line`; Vite's pre-bundled deps are libraries
    assert chrome.language == "typescript" and chrome.innermost_project_frame.path == "switch.tsx"
    next_frames = evidence("js-nextjs-redux-549").traces[0].frames
    overlay = next((f for f in next_frames if f.function == "ReactDevOverlay"), None)
    assert overlay is not None and not overlay.project
    assert overlay.path_suffixes()[0] == "dist/compiled/@next/react-dev-overlay/dist/client.js"  # the package's own


def test_ruby_frames_old_and_new_label_styles():
    eef = evidence("ruby-eefgilm-54").traces[0]
    assert [f.function for f in eef.frames[:4]] == ["extract_to_array_of_lines", "each", "extract_to_array_of_lines", "clean!"]
    assert eef.frames[0].path_suffixes()[0] == "lib/eefgilm/gemfile.rb"  # the gem's own directory is stripped
    trema = evidence("ruby-trema-blog").traces[0]
    assert trema.frames[0].function == "Bundler::SharedHelpers#search_up"
    assert trema.frames[5].path.startswith("<internal:") and not trema.frames[5].project
    tracker = evidence("ruby-rubygems-org-2174").traces[0]  # `[PROJECT_ROOT]/…rb:10 :in `block in show``
    assert tracker.frames[0].path_suffixes()[0] == "app/controllers/dependencies_controller.rb"


def test_go_panics_read_the_function_above_each_location():
    gaper = evidence("go-gaper-9").traces[0]
    assert [(f.function, f.project) for f in gaper.frames] == [
        ("os/exec.(*Cmd).Wait", False),
        ("github.com/maxcnunes/gaper.(*runner).runBin.func1", True),
        ("github.com/maxcnunes/gaper.(*runner).runBin", True),  # `created by …`
    ]
    assert gaper.frames[1].path_suffixes()[0] == "runner.go"
    assert [m.text for m in evidence("go-grmon-8").messages] == [
        "runtime error: invalid memory address or nil pointer dereference"]


def test_rust_panics_and_backtraces():
    uwd = evidence("rust-uwd2-12").traces[0]  # new format: location on the panic line, message below it
    assert (uwd.frames[0].path, uwd.frames[0].line, uwd.frames[0].column) == ("src\\explorer_modinfo.rs", 45, 14)
    assert uwd.message == "called `Option::unwrap()` on a `None` value"
    backtrace = evidence("rust-rust-58554").traces[0]
    assert [(f.function, f.line) for f in backtrace.frames] == [
        ("", 2), ("std::panicking::begin_panic", 505), ("z25::main", 2), ("core::ops::function::FnOnce::call_once", 227)]
    assert [f.project for f in backtrace.frames] == [True, False, True, False]
    diss = evidence("rust-diss-16").traces[0]  # hashes dropped, `__rustc[…]::` prefixes too
    assert "core::fmt::write" in [f.function for f in diss.frames]
    assert "rust_begin_unwind" in [f.function for f in diss.frames]
    enarx = evidence("cargotest-enarx-952").traces[0]  # an old-format message over three lines
    assert enarx.message.startswith("assertion failed: `(left == right)` left: `1`, right: `0`")


def test_csharp_frames_with_and_without_locations_in_two_languages():
    aspnet = evidence("csharp-aspnetcore-2770").traces[0]
    assert "src/EquineExchange.Homepage/Middleware/SafeCrawlingMiddleware.cs" in aspnet.frames[0].path_suffixes()
    assert aspnet.frames[0].line == 25 and not aspnet.frames[1].path
    spanish = evidence("xunit-roslyn-43790").traces[0]  # `en X(…) en C:\…\StringAsserts.cs:línea 244`
    assert (spanish.frames[0].function, spanish.frames[0].line) == ("Xunit.Assert.Equal", 244)
    assert spanish.frames[3].path.endswith("VisualBasicCompletionCommandHandlerTests.vb")


def test_php_frames_one_line_traces_and_xdebug_tables():
    cockpit = evidence("php-cockpitql-20").traces[0]  # throw site, #0, #1; the repeated throw site dropped
    assert [(f.path.rsplit("\\", 1)[-1], f.line) for f in cockpit.frames] == [("api.php", 10), ("bootstrap.php", 309), ("index.php", 22)]
    xdebug = evidence("php-shc-framework-171").traces[0]
    assert xdebug.frames[1].function == "{main}" and not xdebug.frames[1].project
    assert xdebug.frames[2].function == "RWF\\Request\\RequestHandler::handleRequest"


# -- errors, messages, names, tests, paths ---------------------------------------------------------------


def test_errors_runtime_or_project_and_their_messages():
    errors = {e.name: e for e in evidence("ruby-rubygems-org-653").errors}
    assert not errors["ActionView::Template::Error"].builtin  # a library's error, though named `Error`
    assert errors_of("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nInvoiceNotFound: no invoice 12\n") == [
        ("InvoiceNotFound", "no invoice 12", False)]
    assert errors_of("err: unexpected io.EOF while reading\n") == [("io.EOF", "", True)]
    assert errors_of("Errno::ENOENT: No such file or directory @ rb_sysopen\n") == [
        ("Errno::ENOENT", "No such file or directory @ rb_sysopen", False)]
    assert errors_of("called `Result::unwrap()` on an `Err` value: ParseError { line: 3 }\n")[0][:2] == ("ParseError", "")
    assert errors_of("Exception Type: KeyError\nException Value: 'x_pos'\n") == [("KeyError", "", True)]
    assert errors_of("AssertionError [ERR_ASSERTION]: 1 == 2\n") == [("AssertionError", "1 == 2", True)]
    assert errors_of("### Error log\nException handling is described below\n") == []


def errors_of(text: str) -> list[tuple[str, str, bool]]:
    return [(e.name, e.message, e.builtin) for e in extract_evidence(text).errors]


def test_message_fragments_cut_interpolated_values():
    assert message_fragments("need more than 0 values to unpack") == ("values to unpack", "need more than")
    assert message_fragments("'HTTP_REFERER'") == ("HTTP_REFERER",)
    assert message_fragments("No such file: /tmp/x/y.txt (id 0xdeadbeef)") == ("No such file",)
    assert message_fragments("Cannot read properties of undefined (reading 'parentPath')") == (
        "Cannot read properties of undefined (reading", "parentPath")
    assert message_fragments("42") == ()
    messages = evidence("python-virtaal-685").messages
    assert [(m.source, m.fragments) for m in messages] == [("error", ("values to unpack", "need more than"))]


def test_code_names_in_backticks_code_blocks_and_prose():
    text = ("When `Foo::Bar.call` runs, `parse_config()` returns nil and Session.refresh() is skipped.\n"
            "Not names: Node.js, e.g., github.com, the word Session alone.\n"
            "```python\ndef load_settings(path):\n    return yaml_loader.read(path)\n```\n")
    names = {n.name: (n.source, n.strength) for n in extract_evidence(text).names}
    assert names["Foo::Bar.call"] == ("backtick", 0.6)
    assert names["parse_config"] == ("backtick", 0.6)
    assert names["Session.refresh"] == ("prose", 0.4)
    assert names["load_settings"] == ("code", 0.5)
    assert names["yaml_loader.read"][0] == "code"
    assert not {"Node.js", "e.g", "github.com", "Session"} & set(names)


def test_failing_tests_per_runner_with_their_parts():
    tests = {t.name: t for t in evidence("unittest-reinvent-8").tests}
    (test,) = tests.values()
    assert (test.framework, test.function, test.suite) == (
        "unittest", "test_inception_model_1", "unittest_reinvent.inception_tests.test_add.Test_inception_model_add")
    rspec = evidence("rspec-todos-api-30").tests[0]  # the failure and its rerun line merged
    assert (rspec.path, rspec.line) == ("./spec/requests/todos_spec.rb", 60)
    gradle = evidence("junit-smali-537").tests[0]
    assert (gradle.function, gradle.suite) == ("testPackedSwitch", "org.jf.smalidea.dexlib.SmalideaMethodTest")
    jest = evidence("jest-an-issue-47").tests[0]
    assert (jest.function, jest.suite) == ("test that always fails", "example tests")
    cargo = evidence("cargotest-below-8232").tests[0]  # a test thread's panic names the test
    assert (cargo.function, cargo.suite) == ("test_dump_queue_content", "test")
    assert [(t.framework, t.name, t.function) for t in extract_evidence(
        "--- FAIL: TestParse/empty_input (0.00s)\n").tests] == [("go", "TestParse/empty_input", "empty_input")]


def test_path_mentions_normalised_with_lines_and_github_links():
    paths = {p.path: p for p in evidence("xunit-exercism-563").paths}
    assert paths["exercises/clock/ClockTest.cs"].line == 323  # a GitHub blob link's `#L323`
    found = extract_evidence(r"see C:\work\app\src\Models\User.cs:12 and lib/x.rb, not Node.js or v1.2.3" + "\n")
    assert [(p.path, p.line, p.strength) for p in found.paths] == [
        ("C:/work/app/src/Models/User.cs", 12, 0.7), ("lib/x.rb", None, 0.6)]


def test_path_suffixes_strip_what_is_above_a_project_root():
    assert path_suffixes("/home/me/proj/src/pkg/mod.py") == ("proj/src/pkg/mod.py", "src/pkg/mod.py", "pkg/mod.py", "mod.py")
    assert path_suffixes("/usr/lib/python3.12/site-packages/requests/api.py")[0] == "requests/api.py"
    assert path_suffixes("C:\\Users\\HP\\app\\node_modules\\@scope\\pkg\\src\\x.js")[0] == "src/x.js"
    assert path_suffixes("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/diss-0.3.2/src/lib.rs")[0] == "src/lib.rs"
    assert path_suffixes("/go/pkg/mod/github.com/pingcap/errors@v0.11.5/errors.go") == ("errors.go",)
    assert path_suffixes("webpack-internal:///./src/components/App.tsx?v=3")[0] == "src/components/App.tsx"
    assert path_suffixes("[PROJECT_ROOT]/app/models/user.rb")[0] == "app/models/user.rb"
    assert normalize_path("file:///srv/app/x.py") == "/srv/app/x.py"
    assert is_library_location("/usr/local/go/src/os/exec/exec.go")
    assert not is_library_location("/Users/me/go/src/github.com/bcicen/grmon/main.go")
    assert is_library_location("<frozen importlib._bootstrap>") and is_library_location("node:internal/x")


def test_weighted_terms_weigh_evidence_above_prose():
    terms = weighted_terms(evidence("python-virtaal-685"))
    weights = dict((t.term, t.weight) for t in terms)
    assert weights["update_search"] == 1.0 and weights["searchmode"] == 1.0
    assert weights["unpack"] == pytest.approx(0.56)  # a message fragment's word
    assert [t.weight for t in terms] == sorted((t.weight for t in terms), reverse=True)
    report = weighted_terms(evidence("markdown-easybuild-819"))
    prose = {t.term: t.weight for t in report}
    assert prose["config"] > prose["ignored"] == 0.1  # `tools/config.py` names it; `ignored` is only prose
    assert not {"the", "is", "py"} & set(prose)


def test_looks_like_issue_keeps_short_queries_and_names_apart():
    for query in ["how are retries handled", "TRPCError", "Sinatra::Base", "aiohttp/web_app.py",
                  "src/foo.py:12", "where does the parser raise ValueError", "fix `parse_config()`",
                  "response helper methods: halt, pass and redirect", "Error handling in the HTTP client",
                  "why does ValueError: invalid literal for int() happen here",
                  "a\nb\nc", ""]:
        assert not looks_like_issue(query), query
    for text in ["TypeError: Cannot read properties of undefined (reading 'x')",
                 "panic: runtime error: index out of range [3] with length 3",
                 "FAILED tests/test_api.py::test_login - AssertionError"]:
        assert looks_like_issue(text), text


def test_looks_like_issue_reuses_the_callers_evidence():
    text = sample("go-grmon-8")
    assert looks_like_issue(text, extract_evidence(text)) is looks_like_issue(text) is True
    assert looks_like_issue(text, extract_evidence("how are retries handled")) is True  # the text still counts


def test_text_beyond_the_cap_is_not_read():
    head = sample("python-virtaal-685")
    found = extract_evidence(head + "x" * MAX_TEXT_CHARS + head)
    assert found.truncated and len(found.traces) == 1
    assert not extract_evidence(head).truncated


# -- properties ---------------------------------------------------------------------------------------

# Pieces of the formats above: random texts made of them reach every reader's edge cases (a frame's
# prefix without its location, unclosed quotes and parentheses, long runs of one separator).
PIECES = ["at ", 'File "', '", line ', ", in ", ":in `", "'", "`", '"', "(", ")", ":", "1", "42", ".go:", ".py", ".rb:",
          "#0 ", "#1 /a.php(3): ", "::", ".", "/", "\\", "a", "Foo", "Error", "Exception", ": ", "@", " @ ", "http://",
          "panicked at '", "', src/a.rs:1:2", "goroutine 1 [running]:\n", "\tmain.main()\n", "+0x1f\n",
          "Traceback (most recent call last):\n", "Caused by: ", "--- FAIL: ", "FAILED ", "● ", " › ", "```", "\n",
          "\n\n", " ", "\t", "_", "test_", "Test", "[", "]", "{", "}", "<", ">", "é", "\u202e", "\x00", "\ud800"]
adversarial = st.lists(st.sampled_from(PIECES), max_size=2000).map(lambda parts: "".join(parts)[:8192])
binary_junk = st.binary(max_size=8192).map(lambda data: data.decode("utf-8", errors="surrogateescape"))
any_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=8192)

# Catastrophic backtracking takes seconds to minutes on 8 KB; the extractor takes milliseconds
# (bench/evidence_bench.py). This bound only catches the former, with a wide margin for a loaded machine.
PATHOLOGICAL_SECONDS = 2.0


def check_consistent(text: str) -> None:
    started = time.perf_counter()
    found = extract_evidence(text)
    issue = looks_like_issue(text)
    terms = weighted_terms(found)
    elapsed = time.perf_counter() - started
    assert elapsed < PATHOLOGICAL_SECONDS, f"{elapsed:.2f}s on {len(text)} characters"
    assert isinstance(issue, bool)
    read = min(len(text), MAX_TEXT_CHARS)
    items = [*found.frames, *found.paths, *found.errors, *found.messages, *found.names, *found.tests]
    for item in items:
        assert 0 <= item.offset < max(1, read), item
        assert 0.0 < item.strength <= 1.0, item
    for trace in found.traces:
        assert trace.frames and [f.offset for f in trace.frames] == sorted(f.offset for f in trace.frames)
        if trace.innermost_project is not None:
            assert trace.frames[trace.innermost_project].project
    assert len({t.term for t in terms}) == len(terms)
    assert all(0.0 < t.weight <= 1.0 for t in terms)
    assert [(-t.weight, t.term) for t in terms] == sorted((-t.weight, t.term) for t in terms)
    assert extract_evidence(text) == found  # deterministic


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(adversarial)
def test_adversarial_texts_never_raise_and_stay_consistent(text):
    check_consistent(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(binary_junk)
def test_binary_junk_never_raises(data):
    check_consistent(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(any_text)
def test_any_unicode_text_including_lone_surrogates_never_raises(text):
    check_consistent(text)


@pytest.mark.parametrize("text", [
    "a" * 8192, ("at " * 3000)[:8192], ("at a (" * 2000)[:8192], ('File "' * 2000)[:8192], ("x.rb:1:in " * 1000)[:8192],
    ("1:" * 5000)[:8192], "`" * 8192, "(" * 4096 + ")" * 4096, ("a." * 5000)[:8192], ("XError." * 2000)[:8192],
    ("#1 a(" * 2000)[:8192], ("a/b.c:" * 2000)[:8192], "x\n" * 4096, ("'" + "a" * 300) * 27,
    ("Warning: x in " * 600)[:8192], ("a > " * 2000 + "FAILED")[-8192:], ("': x (" * 1400)[:8192],
    ('"' + "a" * 199) * 40, ("test_" * 1700)[:8192], ("FAILED a::" * 820)[:8192],
])
def test_worst_case_shapes_at_8_kb(text):
    check_consistent(text)
