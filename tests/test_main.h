// Test mains that hand LeakSanitizer a quiet process at exit: no thread but the main one left, none half torn down.
#pragma once

#include <QtTest>

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace plab::test {

// Every thread of this process but the calling one, as "tid (name)" for a message.
inline std::string otherThreads()
{
    std::string list;
    const std::string self = std::to_string(gettid());
    std::error_code error;
    for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
         it.increment(error)) {
        const std::filesystem::path& task = it->path();
        const std::string tid = task.filename().string();
        if (tid == self)
            continue;
        std::string name;
        std::getline(std::ifstream(task / "comm"), name);
        list += (list.empty() ? "" : ", ") + tid + " (" + name + ")";
    }
    return list;
}

// Qt's pool threads are detached, and so are the OpenMP workers that a pool thread's parallel regions started:
// QThreadPool::waitForDone() returns while they are still exiting. LeakSanitizer's exit-time scan stops every
// thread and reads its stack and thread-local storage, and it crashes ("Tracer caught signal 11", the test fails
// after every row passed) when it meets a thread in the middle of tearing those down. So, after the application
// object is gone: join this thread's own OpenMP workers, then wait until no other thread is left.
inline void quiesceThreadsBeforeExit()
{
    omp_pause_resource_all(omp_pause_hard);
    using namespace std::chrono_literals;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (std::string others = otherThreads(); !others.empty(); others = otherThreads()) {
        if (std::chrono::steady_clock::now() > deadline) {
            // Not a test failure: the leak check still runs, only without the guarantee.
            std::fprintf(stderr, "test main: threads still running at exit after 20 s: %s\n", others.c_str());
            return;
        }
        std::this_thread::sleep_for(2ms);
    }
}

} // namespace plab::test

// QTEST_MAIN / QTEST_GUILESS_MAIN / QTEST_APPLESS_MAIN, plus the quiet exit above. `Setup` creates the application
// object (or nothing) exactly as Qt's own macros do, inside a scope that ends before the wait.
#define PLAB_QTEST_MAIN_WITH(TestObject, Setup)                                                                        \
    int main(int argc, char* argv[])                                                                                   \
    {                                                                                                                  \
        const int status = [&] {                                                                                       \
            QT_PREPEND_NAMESPACE(QTest::Internal::callInitMain)<TestObject>();                                         \
            Setup TestObject tc;                                                                                       \
            QTEST_SET_MAIN_SOURCE_PATH                                                                                 \
            return QTest::qExec(&tc, argc, argv);                                                                      \
        }();                                                                                                           \
        plab::test::quiesceThreadsBeforeExit();                                                                        \
        return status;                                                                                                 \
    }

#define PLAB_QTEST_MAIN(TestObject) PLAB_QTEST_MAIN_WITH(TestObject, QTEST_MAIN_SETUP())
#define PLAB_QTEST_GUILESS_MAIN(TestObject) PLAB_QTEST_MAIN_WITH(TestObject, QTEST_QAPP_SETUP(QCoreApplication))
#define PLAB_QTEST_APPLESS_MAIN(TestObject) PLAB_QTEST_MAIN_WITH(TestObject, )
