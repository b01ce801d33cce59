"""VBAS for QGIS: loads the C++ Processing provider from libvbas.so next to this file.

qgis_process loads only Python plugins, so this shim ctypes-loads the library, takes the
QgsProcessingProvider* from its extern "C" factory and registers it with the Processing registry.
"""
import ctypes
import os

from qgis.core import QgsApplication, QgsProcessingProvider
from qgis.PyQt import sip

_HERE = os.path.dirname(os.path.abspath(__file__))


class VbasPlugin:
    def __init__(self):
        self.library = None  # the ctypes handle stays alive as long as the plugin
        self.provider = None

    def initProcessing(self):
        if self.provider is not None:
            return
        self.library = ctypes.CDLL(os.path.join(_HERE, "libvbas.so"))
        factory = self.library.vbas_create_provider
        factory.restype = ctypes.c_void_p
        factory.argtypes = [ctypes.c_char_p]
        pointer = factory(os.path.join(_HERE, "icons").encode("utf-8"))
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
