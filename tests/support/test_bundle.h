// SPDX-License-Identifier: GPL-3.0-or-later
// A Qt Test class's main, for a test built on its own or inside a bundle.
//
// Built on its own, FOXHUNT_TEST_APPLESS_MAIN(Class) and its siblings are Qt's QTEST_*_MAIN.
// Inside a bundle (FOXHUNT_TEST_BUNDLE: several test sources compiled as one translation unit, so
// the headers they share are parsed and instantiated once), they register the class under its
// source's name, and the bundle's main (test_bundle_main.cpp) runs the one named first on the
// command line: `foxhunt-tests-models tst_ssd -o -,txt` runs what `tst_ssd -o -,txt` ran.
#pragma once

#include <QObject>
#include <QTest>

#include <memory>

namespace foxhunt::tests {

/// The application object a test class runs under, as Qt's three main macros make it.
enum class TestApp {
    None,    ///< QTEST_APPLESS_MAIN: no application object
    Core,    ///< QTEST_GUILESS_MAIN: a QCoreApplication
    Default, ///< QTEST_MAIN: a QApplication where QtWidgets is linked, else a QCoreApplication
};

using TestFactory = std::unique_ptr<QObject> (*)();

/// Registers a test class under its source file's name without directory or extension
/// (`.../tst_ssd.cpp` -> `tst_ssd`); returns true so it can initialise a static.
bool registerTest(const char* sourcePath, TestApp app, TestFactory make);

} // namespace foxhunt::tests

#define FOXHUNT_TEST_CONCAT_(a, b) a##b
#define FOXHUNT_TEST_CONCAT(a, b) FOXHUNT_TEST_CONCAT_(a, b)

#ifdef FOXHUNT_TEST_BUNDLE
#define FOXHUNT_TEST_REGISTER_(Class, app)                                                                             \
    [[maybe_unused]] static const bool FOXHUNT_TEST_CONCAT(foxhuntTestRegistered, __COUNTER__) =                       \
        foxhunt::tests::registerTest(__FILE__, app,                                                                    \
                                     []() -> std::unique_ptr<QObject> { return std::make_unique<Class>(); });
#define FOXHUNT_TEST_APPLESS_MAIN(Class) FOXHUNT_TEST_REGISTER_(Class, foxhunt::tests::TestApp::None)
#define FOXHUNT_TEST_GUILESS_MAIN(Class) FOXHUNT_TEST_REGISTER_(Class, foxhunt::tests::TestApp::Core)
#define FOXHUNT_TEST_MAIN(Class) FOXHUNT_TEST_REGISTER_(Class, foxhunt::tests::TestApp::Default)
#else
#define FOXHUNT_TEST_APPLESS_MAIN(Class) QTEST_APPLESS_MAIN(Class)
#define FOXHUNT_TEST_GUILESS_MAIN(Class) QTEST_GUILESS_MAIN(Class)
#define FOXHUNT_TEST_MAIN(Class) QTEST_MAIN(Class)
#endif
