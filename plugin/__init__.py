"""VBAS for QGIS: loads the C++ Processing provider built for the running QGIS.

qgis_process loads only Python plugins, so this shim ctypes-loads the library, takes the
QgsProcessingProvider* from its extern "C" factory and registers it with the Processing registry.
The library links against one QGIS release (libvbas-3.40.6.so for QGIS 3.40.6); builds for several
releases may sit side by side, and the one for the running QGIS is loaded. Without one, the log
and stderr say which QGIS the plugin was built for, and nothing is registered.
"""
import ctypes
import glob
import os
import sys

from qgis.core import Qgis, QgsApplication, QgsMessageLog, QgsProcessingProvider
from qgis.PyQt import sip

_HERE = os.path.dirname(os.path.abspath(__file__))


def _report(message):
    QgsMessageLog.logMessage(message, "VBAS", Qgis.MessageLevel.Critical)
    sys.stderr.write("VBAS: %s\n" % message)


def _library():
    """The library built for this QGIS, or None after reporting why there is none."""
    running = Qgis.QGIS_VERSION.split("-")[0]
    path = os.path.join(_HERE, "libvbas-%s.so" % running)
    if os.path.exists(path):
        return path
    built = sorted(os.path.basename(p)[len("libvbas-"):-len(".so")] for p in glob.glob(os.path.join(_HERE, "libvbas-*.so")))
    _report("this plugin was built for QGIS %s, and this is QGIS %s: its algorithms are not loaded. "
            "Install the package or ZIP made for this QGIS, or build it against this QGIS (help/installing.html in the plugin folder)."
            % (" and ".join(built) or "no QGIS version", running))
    return None


class VbasPlugin:
    def __init__(self):
        self.library = None  # the ctypes handle stays alive as long as the plugin
        self.provider = None

    def initProcessing(self):
        if self.provider is not None:
            return
        path = _library()
        if path is None:
            return
        try:
            self.library = ctypes.CDLL(path)
        except OSError as error:
            _report("%s could not be loaded (%s): its algorithms are not loaded." % (os.path.basename(path), error))
            return
        factory = self.library.vbas_create_provider
        factory.restype = ctypes.c_void_p
        factory.argtypes = [ctypes.c_char_p]
        pointer = factory(_HERE.encode("utf-8"))  # the plugin folder: its icons/ and help/
        self.provider = sip.wrapinstance(pointer, QgsProcessingProvider)
        QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):
        self.initProcessing()

    def unload(self):
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None


def classFactory(iface):  # noqa: N802 (QGIS plugin entry point)
    return VbasPlugin()
