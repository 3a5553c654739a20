// SPDX-License-Identifier: GPL-3.0-or-later
// The main of a test bundle: runs the registered test class named by the first argument, with
// the rest of the command line as its Qt Test options, as that class's own executable would.
#include "tests/support/test_bundle.h"

#include <QCoreApplication>
#ifdef QT_WIDGETS_LIB
#include <QApplication>
#endif

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace foxhunt::tests {
namespace {

struct Registered {
    std::string sourcePath;
    TestApp app = TestApp::None;
    TestFactory make = nullptr;
};

std::map<std::string, Registered>& registry()
{
    static std::map<std::string, Registered> tests;
    return tests;
}

std::string testName(std::string_view path)
{
    if (const auto slash = path.find_last_of('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
    if (const auto dot = path.find_last_of('.'); dot != std::string_view::npos) path = path.substr(0, dot);
    return std::string(path);
}

std::unique_ptr<QCoreApplication> makeApplication(TestApp app, int& argc, char** argv)
{
    std::unique_ptr<QCoreApplication> made;
    switch (app) {
    case TestApp::None: return made;
    case TestApp::Core: made = std::make_unique<QCoreApplication>(argc, argv); break;
    case TestApp::Default:
#ifdef QT_WIDGETS_LIB
        made = std::make_unique<QApplication>(argc, argv);
#else
        made = std::make_unique<QCoreApplication>(argc, argv);
#endif
        break;
    }
    made->setAttribute(Qt::AA_Use96Dpi, true);
    return made;
}

} // namespace

bool registerTest(const char* sourcePath, TestApp app, TestFactory make)
{
    const auto [it, added] = registry().emplace(testName(sourcePath), Registered{sourcePath, app, make});
    if (!added) {
        std::fprintf(stderr, "test bundle: two test classes named %s (%s and %s)\n", it->first.c_str(),
                     it->second.sourcePath.c_str(), sourcePath);
        std::abort();
    }
    return true;
}

} // namespace foxhunt::tests

int main(int argc, char** argv)
{
    using namespace foxhunt::tests;
    const auto found = argc >= 2 ? registry().find(argv[1]) : registry().end();
    if (found == registry().end()) {
        if (argc >= 2) std::fprintf(stderr, "no test named %s here\n", argv[1]);
        std::fprintf(stderr, "usage: %s TEST [Qt Test options]\ntests in this executable:\n", argv[0]);
        for (const auto& [name, test] : registry()) std::fprintf(stderr, "  %s\n", name.c_str());
        return 2;
    }
    // Qt Test reads the test's name where a test executable's own name would be.
    int testArgc = argc - 1;
    char** testArgv = argv + 1;
    const auto app = makeApplication(found->second.app, testArgc, testArgv);
    const std::unique_ptr<QObject> test = found->second.make();
#ifdef QT_TESTCASE_BUILDDIR
    QTest::setMainSourcePath(found->second.sourcePath.c_str(), QT_TESTCASE_BUILDDIR);
#else
    QTest::setMainSourcePath(found->second.sourcePath.c_str());
#endif
    return QTest::qExec(test.get(), testArgc, testArgv);
}
